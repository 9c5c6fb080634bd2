/* test_triton_model.c — the Inductor Triton perf model (query/perfmodel/
 * triton.c) on hand-made args. Each expected value is the reference's
 * formula (TraceLens PerfModel/triton_compiled_perf_model.py, trace-args
 * path) worked by hand, the Python expression beside it; the same events
 * fed to the reference's TritonCompiledPerfModel give the same numbers. */
#include "query/perfmodel/perfmodel.h"
#include "tests/unit/tl_test.h"

#include <math.h>
#include <string.h>

static tl_arena A;

typedef struct res {
    int rc;
    tl_pm_result r;
    const char *params;
} res;

static res eval_mode(const char *name, const char *dims, const char *types, const char *ci, tl_pm_mode mode)
{
    res o;
    memset(&o, 0, sizeof o);
    tl_pm_args a = {.name = name, .input_dims = dims, .input_type = types, .concrete_inputs = ci};
    const tl_pm_op *op = tl_pm_resolve(name, &a);
    if (!op) {
        o.rc = -100;
        return o;
    }
    tl_err e = {0};
    o.rc = tl_pm_eval(op, &a, mode, NULL, &A, &o.r, &e);
    if (!o.rc) {
        tl_buf b = {0};
        tl_pm_params_repr(&b, &o.r);
        o.params = tl_arena_strndup(&A, b.p ? b.p : "", b.n);
        tl_buf_free(&b);
    }
    return o;
}

static res eval(const char *name, const char *dims, const char *types, const char *ci)
{
    return eval_mode(name, dims, types, ci, TL_PM_FWD);
}

static void test_pointwise(void)
{
    /* ops _to_copy(0) add(1) mul(1) rsqrt(2); xnumel = int('4096'), rnumel 1
     * flops = (0+1+1+2) * 4096 * 1                               = 16384
     * bytes = 4096*2 + 1024*4 + 4096*2 + 2*4096 (pointwise write) = 28672 */
    res o = eval("triton_poi_fused__to_copy_add_mul_rsqrt_0", "[[4,1024],[1024],[4,1024],[]]",
                 "[\"c10::BFloat16\",\"c10::Float\",\"c10::BFloat16\",\"Scalar\"]", "[\"\",\"\",\"\",\"4096\"]");
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, 16384.0, 0);
    CHECK_NEAR(o.r.gflops, 16384.0 / 1e9, 0);
    CHECK_EQ_I(o.r.has_bytes, 1);
    CHECK_NEAR(o.r.bytes, 28672.0, 0);
    CHECK_NEAR(o.r.data_moved_mb, 28672.0 / 1048576.0, 0);
    CHECK_NEAR(o.r.flops_per_byte, 16384.0 / 28672.0, 1e-15);
    CHECK_EQ_S(o.r.compute_spec, "vector_bfloat16"); /* 'c10::BFloat16'.split('::')[-1].lower() */
    CHECK_EQ_S(o.params, "{'fused_ops': 'aten._to_copy, aten.add, aten.mul, aten.rsqrt', 'xnumel': 4096, 'rnumel': 1}");
}

static void test_reduction(void)
{
    /* red with two scalars: xnumel, rnumel = 8, 4096; ops mean(1) pow(2)
     * flops = (1+2) * 8 * 4096     = 98304
     * bytes = 8*4096*2 + 8*1*4     = 65568 (no extra write) */
    res o = eval("triton_red_fused_mean_pow_1", "[[8,4096],[8,1],[],[]]",
                 "[\"c10::Half\",\"c10::Float\",\"Scalar\",\"Scalar\"]", "[\"\",\"\",\"8\",\"4096\"]");
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, 98304.0, 0);
    CHECK_NEAR(o.r.bytes, 65568.0, 0);
    CHECK_EQ_S(o.r.compute_spec, "vector_half");
    CHECK_EQ_S(o.params, "{'fused_ops': 'aten.mean, aten.pow', 'xnumel': 8, 'rnumel': 4096}");

    /* per with one scalar: xnumel = 16, rnumel = 1; "native_layer_norm" is one
     * op (the longest known name wins over native + layer_norm), 0 FLOPs/elem
     * bytes = 16*768*4 * 2 = 98304 */
    o = eval("triton_per_fused_native_layer_norm_0", "[[16,768],[16,768],[]]",
             "[\"c10::Float\",\"c10::Float\",\"Scalar\"]", "[\"\",\"\",\"16\"]");
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, 0.0, 0);
    CHECK_NEAR(o.r.bytes, 98304.0, 0);
    CHECK_EQ_S(o.r.compute_spec, "vector_float");
    CHECK_EQ_S(o.params, "{'fused_ops': 'aten.native_layer_norm', 'xnumel': 16, 'rnumel': 1}");
    CHECK_EQ_I(eval_mode("triton_red_fused_mean_pow_1", "[[8]]", "[\"c10::Half\"]", "[\"8\",\"4\"]",
                         TL_PM_BWD).rc, TL_EUNSUPPORTED);
}

static void test_segmentation_and_dtypes(void)
{
    /* dtypes outside the c10 table count 0 bytes and name no Compute Spec:
     * flops = (add 1 + lt 1 + mul 1 + sub 1) * 888 = 3552, bytes 0.0,
     * FLOPS/Byte NaN (0 bytes) */
    res o = eval("triton_poi_fused_add_bitwise_and_bitwise_not_bitwise_or_ge_lt_mul_sub_0",
                 "[[888],[888],[888],[],[]]", "[\"int\",\"long int\",\"bool\",\"Scalar\",\"Scalar\"]",
                 "[\"\",\"\",\"\",\"0\",\"888\"]");
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, 3552.0, 0);
    CHECK_NEAR(o.r.bytes, 0.0, 0);
    CHECK(isnan(o.r.flops_per_byte));
    CHECK_EQ_S(o.r.compute_spec, "");
    CHECK_EQ_S(o.params, "{'fused_ops': 'aten.add, aten.bitwise_and, aten.bitwise_not, aten.bitwise_or, "
                         "aten.ge, aten.lt, aten.mul, aten.sub', 'xnumel': 888, 'rnumel': 1}");

    /* multi-token names: all_to_all_single; bytes = 64*8 + 8*64 = 1024 */
    o = eval("triton_poi_fused_all_to_all_single_view_2", "[[64],[]]", "[\"c10::Long\",\"Scalar\"]",
             "[\"\",\"64\"]");
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.bytes, 1024.0, 0);
    CHECK_EQ_S(o.r.compute_spec, "vector_long");
    CHECK_EQ_S(o.params, "{'fused_ops': 'aten.all_to_all_single, aten.view', 'xnumel': 64, 'rnumel': 1}");

    /* no segmentation: no ops (0 FLOPs); int('1_0') == 10; bytes = 10*4 + 4*10 */
    o = eval("triton_poi_fused_frobnicate_3", "[[10],[]]", "[\"c10::Int\",\"Scalar\"]", "[\"\",\"1_0\"]");
    CHECK_EQ_I(o.rc, 0);
    CHECK_NEAR(o.r.flops, 0.0, 0);
    CHECK_NEAR(o.r.bytes, 80.0, 0);
    CHECK_EQ_S(o.params, "{'fused_ops': '', 'xnumel': 10, 'rnumel': 1}");
}

static void test_resolve(void)
{
    tl_pm_args a = {.input_dims = "[[4]]", .input_type = "[\"c10::Float\"]"};
    /* no Concrete Inputs, or no integer among them: not modelled (can_model) */
    CHECK(tl_pm_resolve("triton_poi_fused_add_0", &a) == NULL);
    a.concrete_inputs = "[\"\", \"x\"]";
    CHECK(tl_pm_resolve("triton_poi_fused_add_0", &a) == NULL);
    a.concrete_inputs = "[\"\", \"4\"]";
    CHECK(tl_pm_resolve("triton_poi_fused_add_0", &a) != NULL);
    a.input_dims = "[]";
    CHECK(tl_pm_resolve("triton_poi_fused_add_0", &a) == NULL);
    /* other names: the registry decides, args or not */
    CHECK(tl_pm_resolve("triton_tem_fused_mm_0", &a) == NULL);
    CHECK(tl_pm_resolve("aten::mm", NULL) == tl_pm_find("aten::mm"));
    CHECK(tl_pm_triton_name("triton_per_fused_sum_0"));
    CHECK(!tl_pm_triton_name("triton_"));
    /* the Triton entry is not a registry line (no sheet family) */
    const tl_pm_op *t = tl_pm_resolve("triton_poi_fused_add_0", &(tl_pm_args){.input_dims = "[[4]]",
                                      .input_type = "[\"c10::Float\"]", .concrete_inputs = "[\"\",\"4\"]"});
    for (size_t i = 0; i < tl_pm_nops(); i++) CHECK(tl_pm_op_at(i) != t);
}

int main(void)
{
    tl_arena_init(&A, 1 << 16);
    test_pointwise();
    test_reduction();
    test_segmentation_and_dtypes();
    test_resolve();
    tl_arena_free(&A);
    return tl_test_done("test_triton_model");
}
