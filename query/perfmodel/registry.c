/* registry.c — the op -> model table, as data: one line per op name of
 * perf-models.md §4 / Appendix A.1 (165 names) plus the rest of the
 * reference's extension (pseudo-op) models (80 names: InferenceAttention,
 * MoE, RMSNorm, quantisation, RoPE, custom collectives, mHC), in the order of
 * the reference's perf-model table (pytorch-report.md §7; the extension
 * table follows the core one), which fixes the order of the sheet families
 * in the workbook. Adding an op is adding a line.
 * Lookup goes through an open-addressing hash built once on first use. */
#include "query/perfmodel/pm_internal.h"

#include <pthread.h>
#include <string.h>

#define S TL_PM_SINGLE
#define B TL_PM_HAS_BWD
#define P TL_PM_PENDING

/* name, family, category, backward category, model name, model id, flags.
 * Entries flagged P (TL_PM_PENDING) carry the reference's model class name
 * and no model id: they decide the walk and the category, their formulas
 * are not built (docs/PERFMODELS.md). */
static const tl_pm_op ops[] = {
    /* ---- GEMM (single sheet) */
    {"aten::mm", "GEMM", "GEMM", NULL, "mm", PM_MM, S},
    {"aten::addmm", "GEMM", "GEMM", NULL, "addmm", PM_ADDMM, S},
    {"aten::_scaled_mm", "GEMM", "GEMM", NULL, "scaled_mm", PM_SCALED_MM, S},
    {"trtllm::cublas_scaled_mm", "GEMM", "GEMM", NULL, "scaled_mm", PM_SCALED_MM, S},
    {"bitsandbytes::int8_linear_matmul", "GEMM", "GEMM", NULL, "scaled_mm", PM_SCALED_MM, S},
    {"aten::bmm", "GEMM", "GEMM", NULL, "bmm", PM_BMM, S},
    {"tex_ts::te_gemm_ts", "GEMM", "GEMM", NULL, "te_gemm_ts", PM_TE_GEMM_TS, S},
    {"aten::baddbmm", "GEMM", "GEMM", NULL, "baddbmm", PM_BADDBMM, S},
    {"vllm::gemm_with_dynamic_quant", "GEMM", "GEMM", NULL, "gemm_dynamic_quant", PM_GEMM_DYNQ, S},
    {"_Linear_yfwd_mm", "GEMM", "GEMM", NULL, "tev2_pseudo_gemm", PM_TEV2_PSEUDO, S},
    {"_LinearBackward_xgrad_mm", "GEMM", "GEMM", NULL, "tev2_pseudo_gemm", PM_TEV2_PSEUDO, S},
    {"_LinearBackward_wgrad_mm", "GEMM", "GEMM", NULL, "tev2_pseudo_gemm", PM_TEV2_PSEUDO, S},
    {"_LayerNormLinear_yfwd_mm", "GEMM", "GEMM", NULL, "tev2_pseudo_gemm", PM_TEV2_PSEUDO, S},
    {"_LayerNormLinearBackward_xgrad_mm", "GEMM", "GEMM", NULL, "tev2_pseudo_gemm", PM_TEV2_PSEUDO, S},
    {"_LayerNormLinearBackward_wgrad_mm", "GEMM", "GEMM", NULL, "tev2_pseudo_gemm", PM_TEV2_PSEUDO, S},
    {"primus_turbo_cpp_extension::hipblaslt_gemm_fp8", "GEMM", "GEMM", NULL, "hipblaslt_fp8", PM_HIPBLASLT_FP8, S},
    {"primus_turbo::hipblaslt_gemm_fp8", "GEMM", "GEMM", NULL, "hipblaslt_fp8", PM_HIPBLASLT_FP8, S},
    {"primus_turbo_cpp_extension::hipblaslt_gemm_fp4", "GEMM", "GEMM", NULL, "hipblaslt_fp4", PM_HIPBLASLT_FP4, S},
    {"primus_turbo::hipblaslt_gemm_fp4", "GEMM", "GEMM", NULL, "hipblaslt_fp4", PM_HIPBLASLT_FP4, S},
    {"aiter::gemm_a4w4", "GEMM", "GEMM", NULL, "aiter_a4w4", PM_AITER_A4W4, S},
    {"aiter::_gemm_a4w4_asm", "GEMM", "GEMM", NULL, "aiter_a4w4", PM_AITER_A4W4, S},
    {"aiter::batched_gemm_a16wfp4_", "GEMM", "GEMM", NULL, "batched_gemm_a16wfp4", PM_BATCHED_A16WFP4, S},
    {"sglang_profiler::fp8_utils_gemm_a8w8_blockscale", "GEMM", "GEMM", NULL, "a8w8_blockscale", PM_A8W8_BLOCKSCALE, S},
    {"sglang_profiler::gemm_a8w8_blockscale_gemm_a8w8_blockscale", "GEMM", "GEMM", NULL, "a8w8_blockscale", PM_A8W8_BLOCKSCALE, S},
    {"vllm::rocm_aiter_triton_gemm_a8w8_blockscale", "GEMM", "GEMM", NULL, "a8w8_blockscale", PM_A8W8_BLOCKSCALE, S},
    {"aiter::gemm_a8w8_blockscale_ck", "GEMM", "GEMM", NULL, "a8w8_blockscale", PM_A8W8_BLOCKSCALE, S},
    {"aiter::gemm_a8w8_blockscale_cktile", "GEMM", "GEMM", NULL, "a8w8_blockscale", PM_A8W8_BLOCKSCALE, S},
    {"aiter::gemm_a8w8_blockscale_bpreshuffle_ck", "GEMM", "GEMM", NULL, "a8w8_blockscale", PM_A8W8_BLOCKSCALE, S},
    {"aiter::gemm_a8w8_blockscale_bpreshuffle_cktile", "GEMM", "GEMM", NULL, "a8w8_blockscale", PM_A8W8_BLOCKSCALE, S},
    {"aiter::flatmm_a8w8_blockscale_asm", "GEMM", "GEMM", NULL, "a8w8_blockscale", PM_A8W8_BLOCKSCALE, S},
    {"aiter::gfx950_a8w8_blockscale_asm", "GEMM", "GEMM", NULL, "a8w8_blockscale", PM_A8W8_BLOCKSCALE, S},
    {"aiter::gemm_a8w8_ck", "GEMM", "GEMM", NULL, "a8w8_blockscale", PM_A8W8_BLOCKSCALE, S},
    {"aiter::gemm_a8w8_bpreshuffle_ck", "GEMM", "GEMM", NULL, "a8w8_blockscale", PM_A8W8_BLOCKSCALE, S},
    {"aiter::gemm_a8w8_bpreshuffle", "GEMM", "GEMM", NULL, "a8w8_blockscale", PM_A8W8_BLOCKSCALE, S},
    {"vllm::_rocm_aiter_preshuffled_per_token_w8a8_gemm", "GEMM", "GEMM", NULL, "a8w8_blockscale", PM_A8W8_BLOCKSCALE, S},
    {"vllm::rocm_unquantized_gemm", "GEMM", "GEMM", NULL, "rocm_unquantized_gemm", PM_ROCM_UNQUANT, S},
    {"aiter::gemm_a16w16", "GEMM", "GEMM", NULL, "gemm_a16w16", PM_A16W16, S},
    {"aiter::gemm_a16w16_atomic_", "GEMM", "GEMM", NULL, "gemm_a16w16_atomic", PM_A16W16_ATOMIC, S},
    {"aiter::_gemm_a16w16_asm", "GEMM", "GEMM", NULL, "gemm_a16w16_asm", PM_A16W16_ASM, S},
    {"sglang_profiler::gemm_kernels_flydsl_hgemm", "GEMM", "GEMM", NULL, "gemm_a16w16_atomic", PM_A16W16_ATOMIC, S},
    {"aiter::gemm_afp4wfp4_", "GEMM", "GEMM", NULL, "gemm_afp4wfp4", PM_AFP4WFP4, S},
    {"sglang_profiler::batched_gemm_a8w8_a_per_token_group_prequant_w_per_batched_tensor_quant_batched_gemm_a8w8_a_per_token_group_prequant_w_per_batched_tensor_quant",
     "GEMM", "GEMM", NULL, "sglang_batched_a8w8", PM_SGL_BATCHED_A8W8, S},
    {"aiter::_gemm_a8w8_blockscale_bpreshuffle_asm", "GEMM", "GEMM", NULL, "a8w8_blockscale", PM_A8W8_BLOCKSCALE, S},

    /* ---- SDPA (_fwd + _bwd) */
    {"FlashAttnFunc", "SDPA", "SDPA_fwd", "SDPA_bwd", "flash_fwd", PM_FLASH_FWD, B},
    {"flash_attn::_flash_attn_forward", "SDPA", "SDPA_fwd", "SDPA_bwd", "flash_fwd", PM_FLASH_FWD, B},
    {"flash_attn::_flash_attn_backward", "SDPA", "SDPA_bwd", "SDPA_bwd", "flash_bwd", PM_FLASH_BWD, B},
    {"flash_attn::_flash_attn_varlen_forward", "SDPA", "SDPA_fwd", "SDPA_bwd", "varlen_fwd", PM_VARLEN_FWD, B},
    {"flash_attn::_flash_attn_varlen_backward", "SDPA", "SDPA_bwd", "SDPA_bwd", "varlen_bwd", PM_VARLEN_BWD, B},
    {"aten::_scaled_dot_product_cudnn_attention", "SDPA", "SDPA_fwd", "SDPA_bwd", "sdpa_aten_cudnn", PM_SDPA_CUDNN, B},
    {"aten::_scaled_dot_product_efficient_attention", "SDPA", "SDPA_fwd", "SDPA_bwd", "sdpa_aten_eff", PM_SDPA_EFF, B},
    {"aten::_scaled_dot_product_flash_attention", "SDPA", "SDPA_fwd", "SDPA_bwd", "sdpa_aten_flash", PM_SDPA_FLASH, B},
    {"aiter::_flash_attn_forward", "SDPA", "SDPA_fwd", "SDPA_bwd", "aiter_fa_fwd", PM_AITER_FA_FWD, B},
    {"aiter::_flash_attn_backward", "SDPA", "SDPA_bwd", "SDPA_bwd", "aiter_fa_bwd", PM_AITER_FA_BWD, B},
    {"aiter::wrapper_fmha_v3_fwd", "SDPA", "SDPA_fwd", "SDPA_bwd", "aiter_v3_wrap_fwd", PM_AITER_V3_FWD, B},
    {"aiter::wrapper_fmha_v3_bwd", "SDPA", "SDPA_bwd", "SDPA_bwd", "aiter_v3_wrap_bwd", PM_AITER_V3_BWD, B},
    {"aiter::mha_fwd", "SDPA", "SDPA_fwd", "SDPA_bwd", "aiter_mha_fwd", PM_AITER_MHA_FWD, B},
    {"aiter::fmha_v3_fwd", "SDPA", "SDPA_fwd", "SDPA_bwd", "aiter_mha_fwd", PM_AITER_MHA_FWD, B},
    {"aiter::mha_bwd", "SDPA", "SDPA_bwd", "SDPA_bwd", "aiter_mha_bwd", PM_AITER_MHA_BWD, B},
    {"flash_attn_3::fwd", "SDPA", "SDPA_fwd", "SDPA_bwd", "fa3_fwd", PM_FA3_FWD, B},
    {"EvoformerAttention", "SDPA", "SDPA_fwd", "SDPA_bwd", "evoformer", PM_EVOFORMER, B},

    /* ---- CONV (_fwd + _bwd) */
    {"aten::convolution", "CONV", "CONV_fwd", "CONV_bwd", "conv_fwd", PM_CONV_FWD, B},
    {"aten::convolution_backward", "CONV", "CONV_bwd", NULL, "conv_bwd", PM_CONV_BWD, 0},
    {"ConvBias_", "CONV", "CONV_fwd", "CONV_bwd", "convbias_fwd", PM_CONVBIAS_FWD, B},
    {"ConvBiasReLU_", "CONV", "CONV_fwd", "CONV_bwd", "convbias_fwd", PM_CONVBIAS_FWD, B},
    {"ConvBias_Backward", "CONV", "CONV_bwd", NULL, "convbias_bwd", PM_CONVBIAS_BWD, 0},
    {"ConvBiasReLU_Backward", "CONV", "CONV_bwd", NULL, "convbias_bwd", PM_CONVBIAS_BWD, 0},

    /* ---- InferenceAttention (_fwd + _bwd): extension models (formulas pending where flagged P) */
    {"vllm::unified_attention_with_output", "InferenceAttention", "InferenceAttention", NULL, "vllm_unified_attention_with_output", PM_INF_ATTN, 0},
    {"aiter::mha_varlen_fwd", "InferenceAttention", "InferenceAttention", NULL, "mha_varlen_fwd", PM_INF_ATTN, 0},
    {"aiter::fmha_v3_varlen_fwd", "InferenceAttention", "InferenceAttention", NULL, "aiter_fmha_v3_varlen_fwd", PM_INF_ATTN_DV, 0},
    {"aiter::mha_batch_prefill", "InferenceAttention", "InferenceAttention", NULL, "aiter_mha_batch_prefill", PM_INF_ATTN_DV, 0},
    {"sglang_profiler::attention_paged_attention_ragged", "InferenceAttention", "InferenceAttention", NULL, "aiter_paged_attention_ragged", PM_INF_ATTN_PAGED, 0},
    {"pseudo_mla_decode_fwd", "InferenceAttention", "InferenceAttention", NULL, "mla_decode_fwd", PM_INF_ATTN, 0},
    {"pseudo_mla_prefill_fwd", "InferenceAttention", "InferenceAttention", NULL, "pseudo_mla_prefill_fwd", PM_INF_ATTN_DV, 0},
    {"aiter::pa_decode_gluon", "InferenceAttention", "InferenceAttention", NULL, "pa_decode_gluon", -1, P},
    {"pseudo_v4_paged_decode_swa", "InferenceAttention", "InferenceAttention", NULL, "pseudo_v4_paged_decode_swa", -1, P},
    {"pseudo_v4_paged_decode_csa", "InferenceAttention", "InferenceAttention", NULL, "pseudo_v4_paged_decode_csa", -1, P},
    {"pseudo_v4_paged_decode_hca", "InferenceAttention", "InferenceAttention", NULL, "pseudo_v4_paged_decode_hca", -1, P},
    {"aiter::pa_sparse_prefill_opus_fwd", "InferenceAttention", "InferenceAttention", NULL, "pa_sparse_prefill_opus_fwd", -1, P},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd", "InferenceAttention", "InferenceAttention", NULL, "mla_tilelang_sparse_fwd", -1, P},
    {"vllm::gdn_attention_core", "InferenceAttention", "InferenceAttention", NULL, "gdn_attention_core", -1, P},
    {"aiter::linear_attention_with_output_base", "InferenceAttention", "InferenceAttention", NULL, "gdn_attention_core", -1, P},
    {"sglang::store_cache", "InferenceAttention", "InferenceAttention", NULL, "sglang_store_cache", PM_SGL_STORE_CACHE, 0},

    /* ---- BinaryElementwise (single sheet) */
    {"LigerSiLUMulFunction", "BinaryElementwise", "elementwise", NULL, "liger_silu_mul", PM_LIGER_SILU_MUL, S},
    {"aten::div", "BinaryElementwise", "elementwise", NULL, "binary", PM_BINARY, S},
    {"aten::div_", "BinaryElementwise", "elementwise", NULL, "binary", PM_BINARY, S},
    {"aten::mul", "BinaryElementwise", "elementwise", NULL, "binary", PM_BINARY, S},
    {"aten::mul_", "BinaryElementwise", "elementwise", NULL, "binary", PM_BINARY, S},
    {"aten::add", "BinaryElementwise", "elementwise", NULL, "binary", PM_BINARY, S},
    {"aten::add_", "BinaryElementwise", "elementwise", NULL, "binary", PM_BINARY, S},
    {"aten::sigmoid_backward", "BinaryElementwise", "elementwise", NULL, "binary", PM_BINARY, S},
    {"aten::threshold_backward", "BinaryElementwise", "elementwise", NULL, "binary", PM_BINARY, S},
    /* extension models filed on this sheet */
    {"aiter::dynamic_per_token_scaled_quant", "BinaryElementwise", "GroupQuant", NULL, "per_group_quant", PM_GROUP_QUANT, S},
    {"aiter::dynamic_per_group_scaled_quant", "BinaryElementwise", "GroupQuant", NULL, "per_group_quant", PM_GROUP_QUANT, S},
    {"vllm::triton_per_token_group_quant_fp8", "BinaryElementwise", "GroupQuant", NULL, "vllm_triton_per_token_group_quant_fp8", PM_TOKEN_GROUP_QUANT_FP8, S},
    {"aiter::dynamic_per_tensor_quant", "BinaryElementwise", "GroupQuant", NULL, "per_group_quant", PM_GROUP_QUANT, S},

    /* ---- GroupedGEMM (_fwd + _bwd; no backward model) */
    {"primus_turbo::grouped_gemm", "GroupedGEMM", "GroupedGEMM_fwd", NULL, "grouped_gemm", PM_GROUPED_GEMM, 0},
    {"primus_turbo::grouped_gemm_impl", "GroupedGEMM", "GroupedGEMM_fwd", NULL, "grouped_gemm", PM_GROUPED_GEMM, 0},
    {"primus_turbo_cpp_extension::grouped_gemm", "GroupedGEMM", "GroupedGEMM_fwd", NULL, "grouped_gemm", PM_GROUPED_GEMM, 0},
    {"primus_turbo::grouped_gemm_variable_k", "GroupedGEMM", "GroupedGEMM_fwd", NULL, "grouped_gemm_vk", PM_GROUPED_GEMM_VK, 0},
    {"primus_turbo::grouped_gemm_variable_k_impl", "GroupedGEMM", "GroupedGEMM_fwd", NULL, "grouped_gemm_vk", PM_GROUPED_GEMM_VK, 0},
    {"primus_turbo_cpp_extension::grouped_gemm_variable_k", "GroupedGEMM", "GroupedGEMM_fwd", NULL, "grouped_gemm_vk", PM_GROUPED_GEMM_VK, 0},
    {"primus_turbo_cpp_extension::ck_grouped_gemm", "GroupedGEMM", "GroupedGEMM_fwd", NULL, "grouped_gemm", PM_GROUPED_GEMM, 0},
    {"primus_turbo_cpp_extension::ck_grouped_gemm_variable_k", "GroupedGEMM", "GroupedGEMM_fwd", NULL, "grouped_gemm_vk", PM_GROUPED_GEMM_VK, 0},

    /* ---- MoE_comm, SSM, RoPE, CrossEntropy (_fwd + _bwd) */
    {"MoEDispatch", "MoE_comm", "MoE_comm_fwd", "MoE_comm_bwd", "moe_comm", PM_MOE_COMM, B},
    {"MoECombine", "MoE_comm", "MoE_comm_fwd", "MoE_comm_bwd", "moe_comm", PM_MOE_COMM, B},
    {"DaoAILab::_causal_conv1d_fwd_cpp", "SSM", "SSM_fwd", NULL, "causal_conv1d", PM_CAUSAL_CONV1D, 0},
    {"MambaSplitConv1dScanCombinedFn", "SSM", "SSM_fwd", "SSM_bwd", "mamba_ssd", PM_MAMBA_SSD, B},
    {"FusedRoPEFunc", "RoPE", "RoPE_fwd", NULL, "fused_rope", PM_FUSED_ROPE, 0},
    {"aiter::rope_cached_positions_2c_fwd_impl", "RoPE", "RoPE_fwd", NULL, "aiter_rope_cached_positions_2c_fwd_impl", PM_AITER_ROPE_2C, 0},
    {"sgl_kernel::rotary_embedding", "RoPE", "RoPE_fwd", NULL, "sgl_rotary", PM_SGL_ROTARY, 0},
    {"CrossEntropyFunction", "CrossEntropy", "CrossEntropy_fwd", NULL, "cross_entropy", PM_CROSS_ENTROPY, 0},

    /* ---- UnaryElementwise (single sheet) */
    {"primus_turbo_cpp_extension::quantize_fp8_tensorwise", "UnaryElementwise", "elementwise", NULL, "quantize_fp8", PM_QUANT_FP8, S},
    {"primus_turbo::quantize_fp8_tensorwise", "UnaryElementwise", "elementwise", NULL, "quantize_fp8", PM_QUANT_FP8, S},
    {"primus_turbo_cpp_extension::quantize_mxfp4_dual", "UnaryElementwise", "elementwise", NULL, "quantize_mxfp4_dual", PM_QUANT_MXFP4_DUAL, S},
    {"primus_turbo::quantize_mxfp4_dual", "UnaryElementwise", "elementwise", NULL, "quantize_mxfp4_dual", PM_QUANT_MXFP4_DUAL, S},
    {"primus::quantize_mxfp4_dual", "UnaryElementwise", "elementwise", NULL, "quantize_mxfp4_dual", PM_QUANT_MXFP4_DUAL, S},
    {"aten::copy", "UnaryElementwise", "elementwise", NULL, "unary", PM_UNARY, S},
    {"aten::copy_", "UnaryElementwise", "elementwise", NULL, "unary", PM_UNARY, S},
    {"aten::clamp_min", "UnaryElementwise", "elementwise", NULL, "unary", PM_UNARY, S},
    {"aten::clamp_min_", "UnaryElementwise", "elementwise", NULL, "unary", PM_UNARY, S},
    {"aten::clamp_max", "UnaryElementwise", "elementwise", NULL, "unary", PM_UNARY, S},
    {"aten::clamp_max_", "UnaryElementwise", "elementwise", NULL, "unary", PM_UNARY, S},
    {"aten::sigmoid", "UnaryElementwise", "elementwise", NULL, "unary", PM_UNARY, S},
    {"aten::rsqrt", "UnaryElementwise", "elementwise", NULL, "unary", PM_UNARY, S},
    {"aten::silu", "UnaryElementwise", "elementwise", NULL, "unary", PM_UNARY, S},
    {"aten::neg", "UnaryElementwise", "elementwise", NULL, "unary", PM_UNARY, S},
    {"aten::pow", "UnaryElementwise", "elementwise", NULL, "unary", PM_UNARY, S},
    {"aten::replication_pad1d", "UnaryElementwise", "elementwise", NULL, "replication_pad", PM_REPLICATION_PAD, S},
    {"aten::replication_pad2d", "UnaryElementwise", "elementwise", NULL, "replication_pad", PM_REPLICATION_PAD, S},
    {"aten::replication_pad3d", "UnaryElementwise", "elementwise", NULL, "replication_pad", PM_REPLICATION_PAD, S},
    {"aten::upsample_nearest1d", "UnaryElementwise", "elementwise", NULL, "upsample_nearest", PM_UPSAMPLE_NEAREST, S},
    {"aten::upsample_nearest2d", "UnaryElementwise", "elementwise", NULL, "upsample_nearest", PM_UPSAMPLE_NEAREST, S},
    {"aten::upsample_nearest3d", "UnaryElementwise", "elementwise", NULL, "upsample_nearest", PM_UPSAMPLE_NEAREST, S},
    /* extension models filed on this sheet */
    {"aiter::silu_and_mul", "UnaryElementwise", "elementwise", NULL, "silu_and_mul", PM_SILU_AND_MUL, S},
    {"_C::silu_and_mul", "UnaryElementwise", "elementwise", NULL, "silu_and_mul", PM_SILU_AND_MUL, S},
    {"sgl_kernel::silu_and_mul", "UnaryElementwise", "elementwise", NULL, "silu_and_mul", PM_SILU_AND_MUL, S},
    {"aiter::gelu_and_mul", "UnaryElementwise", "elementwise", NULL, "gelu_and_mul", PM_GELU_AND_MUL, S},
    {"aiter::gelu_tanh_and_mul", "UnaryElementwise", "elementwise", NULL, "gelu_tanh_and_mul", PM_GELU_TANH_AND_MUL, S},

    /* ---- MoE, RMSNorm, quantisation, RoPE, custom collectives, mHC (_fwd + _bwd): extension models (formulas pending where flagged P) */
    {"pseudo_op::moe_aiter_fused_1stage", "MoE_fused", "MoE_fused", NULL, "moe_aiter_fused_1stage", -1, P},
    {"aiter::fmoe_fp8_blockscale_g1u1", "MoE_fused", "MoE_fused", NULL, "moe_aiter_fused_blockscale", PM_MOE_FUSED_BLOCKSCALE, 0},
    {"aiter::fmoe_g1u1", "MoE_fused", "MoE_fused", NULL, "moe_aiter_fused_blockscale", PM_MOE_FUSED_BLOCKSCALE, 0},
    {"aiter::moe_cktile2stages_gemm1_ck", "MoE_unfused", "MoE_unfused", NULL, "moe_aiter_unfused_up", -1, P},
    {"aiter::moe_cktile2stages_gemm2_ck", "MoE_unfused", "MoE_unfused", NULL, "moe_aiter_unfused_down", -1, P},
    {"aiter::ck_moe_stage1", "MoE_unfused", "MoE_unfused", NULL, "moe_aiter_ck_stage1", -1, P},
    {"aiter::ck_moe_stage2", "MoE_unfused", "MoE_unfused", NULL, "moe_aiter_ck_stage2", -1, P},
    {"pseudo_op::moe_triton_unfused_up", "MoE_unfused", "MoE_unfused", NULL, "moe_triton_unfused_up", PM_MOE_TRITON_UP, 0},
    {"pseudo_op::moe_triton_unfused_down", "MoE_unfused", "MoE_unfused", NULL, "moe_triton_unfused_down", PM_MOE_TRITON_DOWN, 0},
    {"pseudo_op::moe_gptq_awq_up", "MoE_unfused", "MoE_unfused", NULL, "moe_gptq_awq_up", -1, P},
    {"pseudo_op::moe_gptq_awq_down", "MoE_unfused", "MoE_unfused", NULL, "moe_gptq_awq_down", -1, P},
    {"pseudo_op::moe_flydsl_stage1", "MoE_unfused", "MoE_unfused", NULL, "moe_flydsl_stage1", -1, P},
    {"pseudo_op::moe_flydsl_stage2", "MoE_unfused", "MoE_unfused", NULL, "moe_flydsl_stage2", -1, P},
    {"sglang_profiler::fused_moe_triton_kernels_invoke_fused_moe_kernel", "MoE_unfused", "MoE_unfused", NULL, "moe_triton_invoke_grouped_gemm", -1, P},
    {"aiter::biased_grouped_topk_hip", "MoE_aux", "MoE_aux", NULL, "BiasedGroupedTopk", -1, P},
    {"aiter::moe_sorting_fwd", "MoE_aux", "MoE_aux", NULL, "MoeSortScatterGather", -1, P},
    {"aiter::mxfp4_moe_sort_hip", "MoE_aux", "MoE_aux", NULL, "MoeSortScatterGather", -1, P},
    {"sglang_profiler::fused_moe_triton_kernels_fused_append_shared_experts", "MoE_aux", "MoE_aux", NULL, "sglang_fused_append_shared_experts", -1, P},
    {"aiter::topk_softplus", "MoE_aux", "MoE_aux", NULL, "topk_softplus", PM_TOPK_SOFTPLUS, 0},
    {"aiter::fused_add_rmsnorm_pad_", "RMSNorm", "RMSNorm", NULL, "vllm_rocm_aiter_triton_add_rmsnorm_pad", PM_RMSNORM_ADD_PAD, 0},
    {"aiter::rms_norm", "RMSNorm", "RMSNorm", NULL, "aiter_rms_norm", PM_AITER_RMS_NORM, 0},
    {"aiter::rmsnorm", "RMSNorm", "RMSNorm", NULL, "aiter_rmsnorm", PM_AITER_RMSNORM, 0},
    {"aiter::rmsnorm2d_fwd_ck", "RMSNorm", "RMSNorm", NULL, "aiter_rms_norm", PM_AITER_RMS_NORM, 0},
    {"aiter::rmsnorm2d_fwd_with_add_ck", "RMSNorm", "RMSNorm", NULL, "aiter_add_rmsnorm", PM_AITER_ADD_RMSNORM, 0},
    {"aiter::add_rmsnorm", "RMSNorm", "RMSNorm", NULL, "aiter_add_rmsnorm", PM_AITER_ADD_RMSNORM, 0},
    {"aiter::rmsnorm2d_fwd_with_dynamicquant_ck", "RMSNorm", "RMSNorm", NULL, "aiter_rmsnorm2d_fwd_with_dynamicquant_ck", PM_RMSNORM_DYNQUANT, 0},
    {"vllm::rocm_aiter_rmsnorm_fp8_group_quant", "RMSNorm", "RMSNorm", NULL, "vllm_rocm_aiter_rmsnorm_fp8_group_quant", PM_RMSNORM_FP8_GROUP, 0},
    {"vllm::rocm_aiter_rmsnorm_with_add_fp8_group_quant", "RMSNorm", "RMSNorm", NULL, "vllm_rocm_aiter_rmsnorm_with_add_fp8_group_quant", PM_RMSNORM_ADD_FP8_GROUP, 0},
    {"vllm::rocm_aiter_triton_add_rmsnorm_pad", "RMSNorm", "RMSNorm", NULL, "vllm_rocm_aiter_triton_add_rmsnorm_pad", PM_RMSNORM_ADD_PAD, 0},
    {"sglang_profiler::fused_mxfp4_quant_fused_rms_mxfp4_quant", "RMSNorm", "RMSNorm", NULL, "fused_rms_mxfp4_quant", -1, P},
    {"aiter::_fuse_rmsnorm_fp4_quant", "RMSNorm", "RMSNorm", NULL, "fused_rms_mxfp4_quant", -1, P},
    {"aiter::rmsnorm_quant", "RMSNorm", "RMSNorm", NULL, "aiter_rmsnorm_quant", PM_RMSNORM_QUANT, 0},
    {"aiter::mixed_sample_outer_exponential", "elementwise", "elementwise", NULL, "mixed_sample_outer_exponential", PM_MIXED_SAMPLE, 0},
    {"aiter::fused_dynamic_mx_quant_moe_sort_hip", "GroupQuant", "GroupQuant", NULL, "fused_dynamic_mx_quant_moe_sort_hip", PM_MXFP4_MOE_SORT_STRIDED, 0},
    {"sglang_profiler::fused_mxfp4_quant_fused_flatten_mxfp4_quant", "GroupQuant", "GroupQuant", NULL, "fused_flatten_mxfp4_quant", PM_MXFP4_FLATTEN, 0},
    {"sglang_profiler::quant_dynamic_mxfp4_quant", "GroupQuant", "GroupQuant", NULL, "sglang_quant_dynamic_mxfp4_quant", PM_MXFP4_SGLANG, 0},
    /* category MoE_aux: the reference's category-only table overrides its
     * model class's GroupQuant for this op */
    {"aiter::fused_dynamic_mxfp4_quant_moe_sort_hip", "GroupQuant", "MoE_aux", NULL, "aiter_fused_dynamic_mxfp4_quant_moe_sort_hip", PM_MXFP4_MOE_SORT, 0},
    {"aiter::dynamic_per_group_scaled_quant_fp4", "GroupQuant", "GroupQuant", NULL, "aiter_dynamic_per_group_scaled_quant_fp4", PM_MXFP4_PER_GROUP, 0},
    {"aiter::fused_qk_rope_concat_and_cache_mla", "FusedRoPE", "RoPE_fwd", NULL, "fused_qk_rope_concat_and_cache_mla", -1, P},
    {"aiter::fused_qk_rope_cat_and_cache_mla", "FusedRoPE", "RoPE_fwd", NULL, "aiter_fused_qk_rope_cat_and_cache_mla", -1, P},
    {"aiter::fused_allreduce_rmsnorm", "CustomCollective", "CustomCollective", NULL, "aiter_fused_allreduce_rmsnorm", PM_CC_ALLREDUCE_RMSNORM, 0},
    {"aiter::fused_allreduce_rmsnorm_", "CustomCollective", "CustomCollective", NULL, "aiter_fused_allreduce_rmsnorm_", PM_CC_ALLREDUCE_RMSNORM_, 0},
    {"_C_custom_ar::all_reduce", "CustomCollective", "CustomCollective", NULL, "custom_ar_all_reduce", PM_CC_ALL_REDUCE, 0},
    {"aiter::reduce_scatter", "CustomCollective", "CustomCollective", NULL, "aiter_reduce_scatter", PM_CC_REDUCE_SCATTER, 0},
    {"aiter::all_gather_reg", "CustomCollective", "CustomCollective", NULL, "aiter_all_gather_reg", PM_CC_REDUCE_SCATTER, 0},
    {"sgl_kernel::all_reduce_reg", "CustomCollective", "CustomCollective", NULL, "sgl_kernel_all_reduce_reg", PM_CC_ALL_REDUCE, 0},
    {"sgl_kernel::qr_all_reduce", "CustomCollective", "CustomCollective", NULL, "sgl_kernel_qr_all_reduce", PM_CC_ALL_REDUCE, 0},
    {"sglang::reg_all_gather_into_tensor", "CustomCollective", "CustomCollective", NULL, "sgl_kernel_reg_all_gather_into_tensor", PM_CC_REG_ALL_GATHER, 0},
    {"_C_custom_ar::qr_all_reduce", "CustomCollective", "CustomCollective", NULL, "custom_ar_qr_all_reduce", PM_CC_ALL_REDUCE, 0},
    {"aiter::mhc_post", "mHC", "mHC", NULL, "mhc_post", PM_MHC_POST, 0},
    {"aiter::mhc_pre_gemm_sqrsum", "mHC", "mHC", NULL, "mhc_pre_gemm_sqrsum", PM_MHC_PRE_GEMM, 0},
    {"aiter::mhc_pre_big_fuse_rmsnorm", "mHC", "mHC", NULL, "mhc_pre_big_fuse_rmsnorm", PM_MHC_PRE_BIG_FUSE, 0},
    {"aiter::mhc_fused_post_pre_gemm_sqrsum", "mHC", "mHC", NULL, "mhc_fused_post_pre_gemm_sqrsum", PM_MHC_FUSED_POST_PRE, 0},

    /* ---- Normalization (single sheet) */
    {"aiter::_groupnorm_run", "Normalization", "NORM_fwd", NULL, "group_norm", PM_GROUP_NORM, S},
    {"aten::batch_norm", "Normalization", "NORM_fwd", NULL, "batch_norm", PM_BATCH_NORM, S},
    {"aten::native_batch_norm", "Normalization", "NORM_fwd", NULL, "batch_norm", PM_BATCH_NORM, S},
    {"aten::miopen_batch_norm", "Normalization", "NORM_fwd", NULL, "batch_norm", PM_BATCH_NORM, S},
    {"aten::cudnn_batch_norm", "Normalization", "NORM_fwd", NULL, "batch_norm", PM_BATCH_NORM, S},
    {"aten::layer_norm", "Normalization", "NORM_fwd", NULL, "layer_norm", PM_LAYER_NORM, S},
    {"aten::native_layer_norm", "Normalization", "NORM_fwd", NULL, "layer_norm", PM_LAYER_NORM, S},
    {"aten::miopen_layer_norm", "Normalization", "NORM_fwd", NULL, "layer_norm", PM_LAYER_NORM, S},
    {"aten::cudnn_layer_norm", "Normalization", "NORM_fwd", NULL, "layer_norm", PM_LAYER_NORM, S},
    {"aten::group_norm", "Normalization", "NORM_fwd", NULL, "group_norm", PM_GROUP_NORM, S},
    {"aten::native_group_norm", "Normalization", "NORM_fwd", NULL, "group_norm", PM_GROUP_NORM, S},
    {"aten::miopen_group_norm", "Normalization", "NORM_fwd", NULL, "group_norm", PM_GROUP_NORM, S},
    {"aten::cudnn_group_norm", "Normalization", "NORM_fwd", NULL, "group_norm", PM_GROUP_NORM, S},
    {"aten::instance_norm", "Normalization", "NORM_fwd", NULL, "instance_norm", PM_INSTANCE_NORM, S},
    {"aten::native_instance_norm", "Normalization", "NORM_fwd", NULL, "instance_norm", PM_INSTANCE_NORM, S},
    {"aten::miopen_instance_norm", "Normalization", "NORM_fwd", NULL, "instance_norm", PM_INSTANCE_NORM, S},
    {"aten::cudnn_instance_norm", "Normalization", "NORM_fwd", NULL, "instance_norm", PM_INSTANCE_NORM, S},
    {"aten::_fused_rms_norm", "Normalization", "NORM_fwd", NULL, "rms_norm", PM_RMS_NORM, S},
    {"aten::batch_norm_backward", "Normalization", "NORM_bwd", NULL, "batch_norm_bwd", PM_BATCH_NORM_BWD, S},
    {"aten::native_batch_norm_backward", "Normalization", "NORM_bwd", NULL, "batch_norm_bwd", PM_BATCH_NORM_BWD, S},
    {"aten::miopen_batch_norm_backward", "Normalization", "NORM_bwd", NULL, "batch_norm_bwd", PM_BATCH_NORM_BWD, S},
    {"aten::cudnn_batch_norm_backward", "Normalization", "NORM_bwd", NULL, "batch_norm_bwd", PM_BATCH_NORM_BWD, S},
    {"aten::layer_norm_backward", "Normalization", "NORM_bwd", NULL, "layer_norm_bwd", PM_LAYER_NORM_BWD, S},
    {"aten::native_layer_norm_backward", "Normalization", "NORM_bwd", NULL, "layer_norm_bwd", PM_LAYER_NORM_BWD, S},
    {"aten::miopen_layer_norm_backward", "Normalization", "NORM_bwd", NULL, "layer_norm_bwd", PM_LAYER_NORM_BWD, S},
    {"aten::cudnn_layer_norm_backward", "Normalization", "NORM_bwd", NULL, "layer_norm_bwd", PM_LAYER_NORM_BWD, S},
    {"aten::group_norm_backward", "Normalization", "NORM_bwd", NULL, "group_norm_bwd", PM_GROUP_NORM_BWD, S},
    {"aten::native_group_norm_backward", "Normalization", "NORM_bwd", NULL, "group_norm_bwd", PM_GROUP_NORM_BWD, S},
    {"aten::miopen_group_norm_backward", "Normalization", "NORM_bwd", NULL, "group_norm_bwd", PM_GROUP_NORM_BWD, S},
    {"aten::cudnn_group_norm_backward", "Normalization", "NORM_bwd", NULL, "group_norm_bwd", PM_GROUP_NORM_BWD, S},
    {"aten::instance_norm_backward", "Normalization", "NORM_bwd", NULL, "instance_norm_bwd", PM_INSTANCE_NORM_BWD, S},
    {"aten::native_instance_norm_backward", "Normalization", "NORM_bwd", NULL, "instance_norm_bwd", PM_INSTANCE_NORM_BWD, S},
    {"aten::miopen_instance_norm_backward", "Normalization", "NORM_bwd", NULL, "instance_norm_bwd", PM_INSTANCE_NORM_BWD, S},
    {"aten::cudnn_instance_norm_backward", "Normalization", "NORM_bwd", NULL, "instance_norm_bwd", PM_INSTANCE_NORM_BWD, S},
    {"aten::rms_norm_backward", "Normalization", "NORM_bwd", NULL, "rms_norm_bwd", PM_RMS_NORM_BWD, S},
    {"aten::native_rms_norm_backward", "Normalization", "NORM_bwd", NULL, "rms_norm_bwd", PM_RMS_NORM_BWD, S},
    {"aten::miopen_rms_norm_backward", "Normalization", "NORM_bwd", NULL, "rms_norm_bwd", PM_RMS_NORM_BWD, S},
    {"aten::cudnn_rms_norm_backward", "Normalization", "NORM_bwd", NULL, "rms_norm_bwd", PM_RMS_NORM_BWD, S},
    {"aten::_fused_rms_norm_backward", "Normalization", "NORM_bwd", NULL, "rms_norm_bwd", PM_RMS_NORM_BWD, S},
    {"primus::fused_ln_modulate", "Normalization", "NORM_fwd", NULL, "fused_ln_modulate", PM_LN_MODULATE, S},
    {"primus::fused_ln_modulate_backward", "Normalization", "NORM_bwd", NULL, "fused_ln_modulate_bwd", PM_LN_MODULATE_BWD, S},

    /* ---- Reduce (_fwd + _bwd) */
    {"aten::sum", "Reduce", "reduce", "reduce", "reduce", PM_REDUCE, B},
    {"aten::mean", "Reduce", "reduce", "reduce", "reduce", PM_REDUCE, B},
    {"aten::max", "Reduce", "reduce", "reduce", "reduce", PM_REDUCE, B},
    {"aten::min", "Reduce", "reduce", "reduce", "reduce", PM_REDUCE, B},
    {"aten::norm", "Reduce", "reduce", "reduce", "reduce", PM_REDUCE, B},
    {"aten::linalg_norm", "Reduce", "reduce", "reduce", "reduce", PM_REDUCE, B},
    {"aten::std", "Reduce", "reduce", "reduce", "reduce", PM_REDUCE, B},
    {"aten::var", "Reduce", "reduce", "reduce", "reduce", PM_REDUCE, B},
    {"aten::logsumexp", "Reduce", "reduce", "reduce", "reduce", PM_REDUCE, B},
    {"aten::cumsum", "Reduce", "reduce", "reduce", "reduce", PM_REDUCE, B},
    {"aten::cumprod", "Reduce", "reduce", "reduce", "reduce", PM_REDUCE, B},
    {"aten::amin", "Reduce", "reduce", "reduce", "reduce", PM_REDUCE, B},
    {"aten::amax", "Reduce", "reduce", "reduce", "reduce", PM_REDUCE, B},
};

#undef S
#undef B
#undef P

#define NOPS (sizeof ops / sizeof ops[0])
static tl_smap by_name; /* op name -> index in ops */
static const char *families[32];
static size_t nfamilies;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void build(void)
{
    tl_smap_init(&by_name, NOPS);
    for (size_t i = 0; i < NOPS; i++) {
        int isnew;
        size_t *slot = tl_smap_put(&by_name, ops[i].name, strlen(ops[i].name), &isnew);
        if (isnew) *slot = i; /* a repeated name keeps its first entry */
        size_t f;
        for (f = 0; f < nfamilies; f++)
            if (strcmp(families[f], ops[i].family) == 0) break;
        if (f == nfamilies && nfamilies < sizeof families / sizeof families[0])
            families[nfamilies++] = ops[i].family;
    }
}

const tl_pm_op *tl_pm_findn(const char *name, size_t n)
{
    if (!name) return NULL;
    pthread_once(&once, build);
    const size_t *i = tl_smap_get(&by_name, name, n);
    return i ? &ops[*i] : NULL;
}

const tl_pm_op *tl_pm_find(const char *name)
{
    return name ? tl_pm_findn(name, strlen(name)) : NULL;
}

size_t tl_pm_nops(void) { return NOPS; }
const tl_pm_op *tl_pm_op_at(size_t i) { return i < NOPS ? &ops[i] : NULL; }

size_t tl_pm_nfamilies(void)
{
    pthread_once(&once, build);
    return nfamilies;
}

const char *tl_pm_family_at(size_t i)
{
    pthread_once(&once, build);
    return i < nfamilies ? families[i] : NULL;
}

int tl_pm_family_single(const char *family)
{
    if (!family) return 0;
    for (size_t i = 0; i < NOPS; i++)
        if (strcmp(ops[i].family, family) == 0) return (ops[i].flags & TL_PM_SINGLE) != 0;
    return 0;
}
