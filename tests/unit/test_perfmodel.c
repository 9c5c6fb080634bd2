/* test_perfmodel.c — perf models, roofline and perf sheets (query/perfmodel/perfmodel.h)
 * and the Python-literal value tree (query/core/pyval.h).
 *
 * 1. pyval round trips and error handling;
 * 2. registry shape (165 names, O(1) lookup, family order);
 * 3. the worked examples and verification vectors of perf-models.md §9;
 * 4. failure modes (not implemented, bad args, random text: no crash);
 * 5. arch tables and roofline;
 * 6. kernel-list summaries and sheet aggregation against the BERT reference;
 * 7. a golden sweep: every row of every reference perf CSV is fed back
 *    through the models (name + *_first arg columns) and GFLOPS, MB,
 *    FLOPS/Byte, Compute Spec and every param column are compared.
 * Parts 1-5 need no data; 6-7 skip themselves when ../shared/data is absent
 * (the program returns 77 only when nothing data-dependent could run). */
#include "tests/unit/tl_test.h"
#include "query/perfmodel/perfmodel.h"
#include "query/core/pyval.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static tl_arena A;

/* ---------------------------------------------------------------------------
 * helpers */

static int eval_k(const char *name, tl_pm_mode mode, const char *dims, const char *types, const char *strides,
                  const char *ci, const char *kernel, tl_pm_result *r)
{
    const tl_pm_op *op = tl_pm_find(name);
    if (!op) {
        fprintf(stderr, "no model for %s\n", name);
        return -100;
    }
    const char *kn[1] = {kernel};
    tl_pm_args a = {.input_dims = dims, .input_type = types, .input_strides = strides, .concrete_inputs = ci,
                    .kernel_names = kn, .nkernels = kernel ? 1 : 0};
    tl_err e = {0};
    int rc = tl_pm_eval(op, &a, mode, NULL, &A, r, &e);
    if (rc && rc != TL_EUNSUPPORTED && getenv("TL_PM_VERBOSE")) fprintf(stderr, "  %s: %s\n", name, e.msg);
    return rc;
}

static int eval(const char *name, tl_pm_mode mode, const char *dims, const char *types, const char *strides,
                const char *ci, tl_pm_result *r)
{
    return eval_k(name, mode, dims, types, strides, ci, NULL, r);
}

/* str() of a param value, "<absent>" when the key is missing */
static const char *pstr(const tl_pm_result *r, const char *key)
{
    for (size_t i = 0; i < r->nparams; i++)
        if (!strcmp(r->params[i].key, key)) {
            tl_buf b = {0};
            tl_pv_write_str(&b, r->params[i].val, 0);
            char *s = tl_arena_strndup(&A, b.p ? b.p : "", b.n);
            tl_buf_free(&b);
            return s;
        }
    return "<absent>";
}

static const char *keys_of(const tl_pm_result *r)
{
    tl_buf b = {0};
    for (size_t i = 0; i < r->nparams; i++) {
        if (i) tl_buf_puts(&b, ",");
        tl_buf_puts(&b, r->params[i].key);
    }
    char *s = tl_arena_strndup(&A, b.p ? b.p : "", b.n);
    tl_buf_free(&b);
    return s;
}

static const char *repr(const char *text, unsigned flags)
{
    char *out = NULL;
    tl_err e;
    if (tl_pv_reformat(&A, text, strlen(text), flags, &out, &e) != 0) return "<error>";
    return out;
}

static const char *fmtf(double v)
{
    char *s = tl_arena_alloc(&A, 48);
    tl_fmt_pyfloat(v, s);
    return s;
}

/* ---------------------------------------------------------------------------
 * 1. pyval */

static void test_pyval(void)
{
    CHECK_EQ_S(repr("[[512], [141, 512], [], []]", 0), "[[512], [141, 512], [], []]");
    CHECK_EQ_S(repr("[[512],[141,512],[512,512],[],[]]", TL_PV_TUPLES), "((512,), (141, 512), (512, 512), (), ())");
    CHECK_EQ_S(repr("[[[4,1,768],[4,196,768]],[]]", TL_PV_TUPLES), "(((4, 1, 768), (4, 196, 768)), ())");
    CHECK_EQ_S(repr("[\"bool\"]", TL_PV_TUPLES), "('bool',)");
    CHECK_EQ_S(repr("[\"\"]", TL_PV_TUPLES), "('',)");
    CHECK_EQ_S(repr("[\"c10::BFloat16\", \"Scalar\"]", 0), "['c10::BFloat16', 'Scalar']");
    CHECK_EQ_S(repr("[\"it's\", \"a\\\"b\", \"x'y\\\"z\", \"tab\\there\\n\", \"\\u00b5s\", \"\\u0001\", \"\\\\\"]", 0),
               "[\"it's\", 'a\"b', 'x\\'y\"z', 'tab\\there\\n', '\xc2\xb5s', '\\x01', '\\\\']");
    CHECK_EQ_S(repr("[\"\\ud83d\\ude00\"]", 0), "['\xf0\x9f\x98\x80']");
    CHECK_EQ_S(repr("[0.1, 1e-05, 25.0, 1e16, -0.0, 5.4399999999999994e-05, 100.00000000000001, 1234567890123456.0]", 0),
               "[0.1, 1e-05, 25.0, 1e+16, -0.0, 5.4399999999999994e-05, 100.00000000000001, 1234567890123456.0]");
    CHECK_EQ_S(repr("[true, false, null, True, False, None]", 0), "[True, False, None, True, False, None]");
    CHECK_EQ_S(repr("[NaN, Infinity, -Infinity]", 0), "[nan, inf, -inf]");
    CHECK_EQ_S(repr("{'name': 'x', 'stream': 0, 'n': np.float64(1.5), 'c': np.int64(3)}", 0),
               "{'name': 'x', 'stream': 0, 'n': np.float64(1.5), 'c': np.int64(3)}");
    CHECK_EQ_S(repr("[123456789012345678901234567890, -9223372036854775808]", 0),
               "[123456789012345678901234567890, -9223372036854775808]");
    CHECK_EQ_S(repr("(1)", 0), "1");
    CHECK_EQ_S(repr("(1,)", 0), "(1,)");
    CHECK_EQ_S(repr("()", 0), "()");
    CHECK_EQ_S(repr("[1, 2,]", 0), "[1, 2]");
    CHECK_EQ_S(repr("  [ 1 ,\n 2 ] ", 0), "[1, 2]");
    CHECK_EQ_S(repr("'9.9999999999999998e-13'", 0), "'9.9999999999999998e-13'");
    CHECK_EQ_S(repr("[[], {}]", TL_PV_TUPLES), "((), {})");
    /* str(): bare top-level string */
    {
        tl_pv *v;
        tl_err e;
        CHECK(tl_pv_parse(&A, "'conv2d'", 8, &v, &e) == 0);
        tl_buf b = {0};
        tl_pv_write_str(&b, v, 0);
        tl_buf_putc(&b, 0);
        CHECK_EQ_S(b.p, "conv2d");
        tl_buf_free(&b);
    }
    /* errors, never crashes */
    const char *bad[] = {"", "[1,", "]", "[1 2]", "{1}", "'abc", "[1,,2]", "nope", "{'a' 1}", "1 2", "[\"\\u12\"]",
                         "np.float64(1", "-", "--1", "[-True]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tl_pv *v;
        tl_err e = {0};
        CHECK(tl_pv_parse(&A, bad[i], strlen(bad[i]), &v, &e) == TL_EFORMAT);
    }
    {
        char deep[5000];
        memset(deep, '[', sizeof deep - 1);
        deep[sizeof deep - 1] = 0;
        tl_pv *v;
        tl_err e;
        CHECK(tl_pv_parse(&A, deep, strlen(deep), &v, &e) == TL_EFORMAT);
    }
    /* equality follows Python == */
    {
        tl_pv *a, *b, *c, *d;
        tl_err e;
        tl_pv_parse(&A, "[16, True, 'x', (1,)]", 21, &a, &e);
        tl_pv_parse(&A, "[16.0, 1, 'x', (1,)]", 20, &b, &e);
        tl_pv_parse(&A, "[16, True, 'x', [1]]", 20, &c, &e);
        tl_pv_parse(&A, "nan", 3, &d, &e);
        CHECK(tl_pv_equal(a, b));
        CHECK(!tl_pv_equal(a, c));
        CHECK(!tl_pv_equal(d, d));
        CHECK(tl_pv_equal(NULL, tl_pv_new_none(&A)));
        CHECK_EQ_I(tl_pv_len(a), 4);
        CHECK(tl_pv_at(a, -1) && tl_pv_at(a, -1)->kind == TL_PV_TUPLE);
        CHECK(tl_pv_at(a, 4) == NULL);
    }
}

/* ---------------------------------------------------------------------------
 * 2. registry */

static void test_registry(void)
{
    CHECK_EQ_I(tl_pm_nops(), 245);
    size_t bwd = 0, pending = 0;
    for (size_t i = 0; i < tl_pm_nops(); i++) {
        const tl_pm_op *op = tl_pm_op_at(i);
        CHECK(tl_pm_find(op->name) == op);
        if (op->flags & TL_PM_HAS_BWD) bwd++;
        if (op->flags & TL_PM_PENDING) {
            pending++;
            CHECK(!(op->flags & TL_PM_HAS_BWD) && !op->bwd_category && op->model_id == -1);
        }
    }
    CHECK(bwd > 0);
    CHECK_EQ_I(pending, 26);
    CHECK(tl_pm_find("aten::linear") == NULL);
    CHECK(tl_pm_find("aten::_flash_attention_forward") == NULL);
    CHECK(tl_pm_find("") == NULL);
    CHECK(tl_pm_find(NULL) == NULL);
    CHECK(tl_pm_findn("aten::addmmXYZ", 11) == tl_pm_find("aten::addmm"));
    /* the reference's order: build_sheet_category_to_op_names over its table */
    const char *fam[] = {"GEMM", "SDPA", "CONV", "InferenceAttention", "BinaryElementwise", "GroupedGEMM",
                         "MoE_comm", "SSM", "RoPE", "CrossEntropy", "UnaryElementwise", "MoE_fused", "MoE_unfused",
                         "MoE_aux", "RMSNorm", "elementwise", "GroupQuant", "FusedRoPE", "CustomCollective", "mHC",
                         "Normalization", "Reduce"};
    CHECK_EQ_I(tl_pm_nfamilies(), 22);
    for (size_t i = 0; i < 22; i++) CHECK_EQ_S(tl_pm_family_at(i), fam[i]);
    CHECK_EQ_S(tl_pm_find("vllm::unified_attention_with_output")->category, "InferenceAttention");
    CHECK_EQ_S(tl_pm_find("aiter::dynamic_per_token_scaled_quant")->family, "BinaryElementwise");
    CHECK_EQ_S(tl_pm_find("aiter::dynamic_per_token_scaled_quant")->category, "GroupQuant");
    CHECK(tl_pm_family_single("BinaryElementwise") && !tl_pm_family_single("RMSNorm"));
    {
        tl_pm_result pr;
        tl_pm_args pa = {.input_dims = "[[4, 8]]", .input_type = "[\"c10::BFloat16\"]"};
        tl_err pe = {0};
        CHECK_EQ_I(tl_pm_eval(tl_pm_find("aiter::moe_sorting_fwd"), &pa, TL_PM_FWD, NULL, &A, &pr, &pe), TL_EFORMAT);
    }
    CHECK(tl_pm_family_single("GEMM") && tl_pm_family_single("Normalization"));
    CHECK(!tl_pm_family_single("SDPA") && !tl_pm_family_single("Reduce"));
    CHECK_EQ_S(tl_pm_find("aten::native_layer_norm_backward")->category, "NORM_bwd");
    CHECK_EQ_S(tl_pm_find("aten::copy_")->family, "UnaryElementwise");
    CHECK_EQ_S(tl_pm_find("aten::copy_")->category, "elementwise");
}

/* ---------------------------------------------------------------------------
 * 3. worked examples and verification vectors (perf-models.md §9) */

#define NEAR(a, b) CHECK_NEAR((a), (b), 1e-9 * (fabs(b) > 1 ? fabs(b) : 1))

static void test_examples(void)
{
    tl_pm_result r;
    /* §9.1 addmm */
    const char *tk = "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x128_MI16x16x1_SN_LDSB0";
    CHECK_EQ_I(eval_k("aten::addmm", TL_PM_FWD, "[[512], [141, 512], [512, 512], [], []]",
                      "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]",
                      "[[1], [512, 1], [1, 512], [], []]", "[\"\", \"\", \"\", \"1\", \"1\"]", tk, &r),
               0);
    CHECK_EQ_S(fmtf(r.gflops), "0.0739968");
    CHECK_EQ_S(fmtf(r.data_moved_mb), "0.7763671875");
    CHECK_EQ_S(fmtf(r.flops_per_byte), "90.89622641509433");
    CHECK_EQ_S(r.compute_spec, "matrix_bf16");
    CHECK_EQ_S(keys_of(&r), "M,N,K,bias,stride_A,stride_B,dtype_A_B,B,transpose");
    CHECK_EQ_S(pstr(&r, "stride_A"), "(512, 1)");
    CHECK_EQ_S(pstr(&r, "stride_B"), "(1, 512)");
    CHECK_EQ_S(pstr(&r, "dtype_A_B"), "('c10::BFloat16', 'c10::BFloat16')");
    CHECK_EQ_S(pstr(&r, "transpose"), "(True, False)");
    CHECK_EQ_S(pstr(&r, "bias"), "True");
    /* nvjet names carry the layout after the last '_'; cutlass names none */
    eval_k("aten::mm", TL_PM_FWD, "[[4, 8], [8, 16]]", "[\"float\", \"float\"]", "[[8, 1], [16, 1]]", "[\"\", \"\"]",
           "nvjet_tst_64x8_64x16_4x1_v_bz_TNT", &r);
    CHECK_EQ_S(pstr(&r, "transpose"), "(True, False)");
    eval_k("aten::mm", TL_PM_FWD, "[[4, 8], [8, 16]]", "[\"float\", \"float\"]", "[[8, 1], [16, 1]]", "[\"\", \"\"]",
           "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm>", &r);
    CHECK_EQ_S(pstr(&r, "transpose"), "<absent>");
    CHECK_EQ_S(keys_of(&r), "M,N,K,bias,stride_A,stride_B,dtype_A_B,B");
    /* §9.2 */
    eval("aten::addmm", TL_PM_FWD, "[[30522], [141, 512], [512, 30522], [], []]",
         "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", NULL, NULL, &r);
    CHECK_EQ_S(fmtf(r.gflops), "4.41119205");
    CHECK_EQ_S(fmtf(r.data_moved_mb), "38.211021423339844");
    CHECK_EQ_S(fmtf(r.flops_per_byte), "110.09495182588434");
    CHECK_EQ_S(pstr(&r, "stride_A"), "None"); /* no Input Strides: None, not an error */
    eval("aten::addmm", TL_PM_FWD, "[[2048], [141, 512], [512, 2048], [], []]",
         "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", NULL, NULL, &r);
    CHECK_EQ_S(fmtf(r.flops), "295987200.0");
    CHECK_EQ_S(fmtf(r.data_moved_mb), "2.6923828125");
    CHECK_EQ_S(fmtf(r.flops_per_byte), "104.84221980413493");
    /* §9.3 SDPA */
    const char *qkv = "[[1, 8, 141, 64], [1, 8, 141, 64], [1, 8, 141, 64], [], [], [], []]";
    const char *qkvt = "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\"]";
    const char *qkvci = "[\"\", \"\", \"\", \"0.\", \"False\", \"False\", \"0.125\"]";
    CHECK_EQ_I(eval("aten::_scaled_dot_product_flash_attention", TL_PM_FWD, qkv, qkvt, NULL, qkvci, &r), 0);
    CHECK_EQ_S(fmtf(r.gflops), "0.040716288");
    CHECK_EQ_S(fmtf(r.data_moved_mb), "0.55078125");
    CHECK_EQ_S(fmtf(r.flops_per_byte), "70.5");
    CHECK_EQ_S(keys_of(&r), "B,N_Q,H_Q,N_KV,H_KV,d_h_qk,d_h_v,dropout,causal,flash_impl,dtype_A_B");
    {
        tl_buf b = {0};
        tl_pm_params_repr(&b, &r);
        tl_buf_putc(&b, 0);
        CHECK_EQ_S(b.p, "{'B': 1, 'N_Q': 141, 'H_Q': 8, 'N_KV': 141, 'H_KV': 8, 'd_h_qk': 64, 'd_h_v': 64, "
                        "'dropout': 0.0, 'causal': False, 'flash_impl': True, 'dtype_A_B': ('c10::BFloat16', "
                        "'c10::BFloat16')}");
        tl_buf_free(&b);
    }
    /* §9.4 binary */
    eval("aten::add", TL_PM_FWD, "[[1, 141, 512], [1, 141, 512], []]",
         "[\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"]", "[[72192, 512, 1], [72192, 512, 1], []]",
         "[\"\", \"\", \"1\"]", &r);
    CHECK_EQ_S(fmtf(r.gflops), "7.2192e-05");
    CHECK_EQ_S(fmtf(r.data_moved_mb), "0.4130859375");
    CHECK_EQ_S(fmtf(r.flops_per_byte), "0.16666666666666666");
    CHECK_EQ_S(r.compute_spec, "vector_bf16");
    CHECK_EQ_S(pstr(&r, "dtype_in1_in2_out"), "('c10::BFloat16', 'c10::BFloat16', None)");
    CHECK_EQ_S(pstr(&r, "stride_output"), "None");
    /* §9.5 layer norm */
    eval("aten::layer_norm", TL_PM_FWD, "[[1, 141, 512], [], [512], [512], [], []]",
         "[\"c10::BFloat16\", \"ScalarList\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]",
         "[[72192, 512, 1], [], [1], [1], [], []]",
         "[\"\", \"[512]\", \"\", \"\", \"9.9999999999999998e-13\", \"True\"]", &r);
    CHECK_EQ_S(fmtf(r.gflops), "0.000364032");
    CHECK_EQ_S(fmtf(r.data_moved_mb), "0.28125");
    CHECK_EQ_S(fmtf(r.flops_per_byte), "1.234375");

    /* §9.6 verification vectors */
    struct {
        const char *name;
        int bwd;
        const char *dims, *types, *strides, *ci;
        double gflops, mb; /* mb NaN: bytes unknown */
    } v[] = {
        {"aten::convolution", 0, "[[4, 3, 224, 224], [768, 3, 16, 16], [768], [], [], [], [], [], []]",
         "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"ScalarList\", \"ScalarList\", \"ScalarList\", "
         "\"Scalar\", \"ScalarList\", \"Scalar\"]",
         "[[150528, 50176, 224, 1], [768, 256, 16, 1], [1], [], [], [], [], [], []]",
         "[\"\", \"\", \"\", \"[16, 16]\", \"[0, 0]\", \"[1, 1]\", \"False\", \"[0, 0]\", \"1\"]", 0.924844032, 3.421875},
        {"aten::convolution_backward", 0,
         "[[10, 64, 56, 56], [10, 64, 56, 56], [64, 64, 3, 3], [], [], [], [], [], [], [], []]",
         "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"ScalarList\", \"ScalarList\", \"ScalarList\", "
         "\"ScalarList\", \"Scalar\", \"ScalarList\", \"Scalar\", \"ScalarList\"]",
         "[[200704, 3136, 56, 1], [200704, 3136, 56, 1], [576, 9, 3, 1], [], [], [], [], [], [], [], []]",
         "[\"\", \"\", \"\", \"[0]\", \"[1, 1]\", \"[1, 1]\", \"[1, 1]\", \"False\", \"[0, 0]\", \"1\", \"[True, True, "
         "False]\"]",
         4.62422016, 15.453125},
        {"aten::_scaled_dot_product_flash_attention", 1, "[[512, 16, 176, 64], [512, 16, 176, 64], [512, 16, 176, 64], [], [], [], []]",
         "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\"]", NULL,
         "[\"\", \"\", \"\", \"0.\", \"False\", \"False\", \"\"]", 162.40345088, 1232.0},
        {"aten::_scaled_dot_product_efficient_attention", 0, "[[1, 1, 1024, 384], [1, 1, 1024, 384], [1, 1, 1024, 384], [], [], [], [], []]",
         "[\"float\", \"float\", \"float\", \"\", \"Scalar\", \"Scalar\", \"Scalar\", \"\"]", NULL,
         "[\"\", \"\", \"\", \"\", \"False\", \"0.\", \"False\", \"\"]", 1.610612736, 3.0},
        {"aten::bmm", 0, "[[1, 32, 1], [1, 1, 559]]", "[\"float\", \"float\"]", "[[32, 1, 1], [559, 559, 1]]",
         "[\"\", \"\"]", 3.5776e-05, 0.07049179077148438},
        {"aten::native_batch_norm_backward", 0,
         "[[10, 64, 112, 112], [10, 64, 112, 112], [64], [64], [64], [64], [64], [], [], []]",
         "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", "
         "\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\", \"ScalarList\"]",
         "[[802816, 12544, 112, 1], [802816, 12544, 112, 1], [1], [1], [1], [1], [1], [], [], []]",
         "[\"\", \"\", \"\", \"\", \"\", \"\", \"\", \"True\", \"1e-05\", \"[True, True, True]\"]", 0.07225344,
         45.93798828125},
        {"aten::batch_norm", 0, "[[10, 64, 56, 56], [64], [64], [64], [64], [], [], [], []]",
         "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", "
         "\"Scalar\", \"Scalar\", \"Scalar\"]",
         "[[200704, 3136, 56, 1], [1], [1], [1], [1], [], [], [], []]",
         "[\"\", \"\", \"\", \"\", \"\", \"True\", \"0.1\", \"1e-05\", \"True\"]", 0.010035584, 7.656982421875},
        {"aten::instance_norm", 0, "[[8, 16, 32, 32], [16], [16], [], [], [], [], [], []]",
         "[\"float\", \"float\", \"float\", \"\", \"\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\"]",
         "[[16384, 1024, 32, 1], [1], [1], [], [], [], [], [], []]",
         "[\"\", \"\", \"\", \"\", \"\", \"True\", \"0.1\", \"1e-05\", \"True\"]", 0.000655456, 1.0003662109375},
        {"aten::native_layer_norm_backward", 0,
         "[[8, 16, 32, 32], [8, 16, 32, 32], [], [8, 1, 1, 1], [8, 1, 1, 1], [16, 32, 32], [16, 32, 32], []]",
         "[\"float\", \"float\", \"ScalarList\", \"float\", \"float\", \"float\", \"float\", \"ScalarList\"]",
         "[[16384, 1024, 32, 1], [16384, 1024, 32, 1], [], [1, 1, 1, 1], [1, 1, 1, 1], [1024, 32, 1], [1024, 32, 1], []]",
         "[\"\", \"\", \"[16, 32, 32]\", \"\", \"\", \"\", \"\", \"[True, True, True]\"]", 0.001179648, 1.75},
        {"aten::native_group_norm_backward", 0,
         "[[8, 16, 32, 32], [8, 16, 32, 32], [8, 4], [8, 4], [16], [], [], [], [], []]",
         "[\"float\", \"float\", \"float\", \"float\", \"float\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\", \"ScalarList\"]",
         "[[16384, 1024, 32, 1], [16384, 1024, 32, 1], [4, 1], [4, 1], [1], [], [], [], [], []]",
         "[\"\", \"\", \"\", \"\", \"\", \"8\", \"16\", \"1024\", \"4\", \"[True, True, True]\"]", 0.001179648,
         1.50006103515625},
        {"aten::miopen_batch_norm_backward", 0, "[[8, 16, 32, 32], [8, 16, 32, 32], [16], [16], [16], [16], [16], []]",
         "[\"float\", \"float\", \"float\", \"float\", \"float\", \"float\", \"float\", \"Scalar\"]",
         "[[16384, 1024, 32, 1], [16384, 1024, 32, 1], [1], [1], [1], [1], [1], []]",
         "[\"\", \"\", \"\", \"\", \"\", \"\", \"\", \"1e-05\"]", 0.000524336, 1.00006103515625},
        {"aten::_fused_rms_norm", 0, "[[8, 16, 32, 32], [], [32, 32], []]", "[\"float\", \"ScalarList\", \"float\", \"\"]",
         "[[16384, 1024, 32, 1], [], [32, 1], []]", "[\"\", \"[32, 32]\", \"\", \"\"]", 0.000524544, 1.00390625},
        {"aten::_fused_rms_norm_backward", 0, "[[8, 16, 32, 32], [8, 16, 32, 32], [], [8, 16, 1, 1], [32, 32], []]",
         "[\"float\", \"float\", \"ScalarList\", \"float\", \"float\", \"ScalarList\"]",
         "[[16384, 1024, 32, 1], [16384, 1024, 32, 1], [], [16, 1, 1, 1], [32, 1], []]",
         "[\"\", \"\", \"[32, 32]\", \"\", \"\", \"[True, True]\"]", 0.00131072, 1.5078125},
        {"aten::_fused_rms_norm_backward", 0, "[[8, 16, 32, 32], [8, 16, 32, 32], [], [8, 16, 1, 1], [32, 32], []]",
         "[\"float\", \"float\", \"ScalarList\", \"float\", \"float\", \"ScalarList\"]",
         "[[16384, 1024, 32, 1], [16384, 1024, 32, 1], [], [16, 1, 1, 1], [32, 1], []]",
         "[\"\", \"\", \"[32, 32]\", \"\", \"\", \"[True, False]\"]", 0.001048576, 1.5078125},
        {"aten::mean", 0, "[[16, 559, 1024], [], [], []]", "[\"float\", \"ScalarList\", \"Scalar\", \"\"]",
         "[[572416, 1024, 1], [], [], []]", "[\"\", \"[-1]\", \"True\", \"\"]", 0.009158656, 34.937503814697266},
        {"aten::mean", 1, "[[10, 512, 7, 7], [], [], []]", "[\"c10::BFloat16\", \"ScalarList\", \"Scalar\", \"\"]",
         "[[25088, 49, 7, 1], [], [], []]", "[\"\", \"[-1, -2]\", \"True\", \"\"]", 0.00025088, 0.4785175323486328},
        {"aten::sum", 0, "[[1, 512], [], [], []]", "[\"bool\", \"ScalarList\", \"Scalar\", \"\"]", "[[512, 1], [], [], []]",
         "[\"\", \"[1]\", \"False\", \"\"]", 5.12e-07, NAN},
        {"aten::upsample_nearest1d", 0, "[[1, 768, 8], [], []]", "[\"c10::BFloat16\", \"ScalarList\", \"\"]",
         "[[6144, 1, 768], [], []]", "[\"\", \"[128]\", \"\"]", 9.8304e-05, 0.19921875},
        {"aten::copy_", 0, "[[16, 559, 1024], [16, 559, 1024], []]", "[\"float\", \"c10::BFloat16\", \"Scalar\"]",
         "[[572416, 1024, 1], [572416, 1024, 1], []]", "[\"\", \"\", \"False\"]", 0.009158656, 52.40625},
        {"aten::mul", 0, "[[16, 559, 1024], [16, 559, 1]]", "[\"float\", \"float\"]",
         "[[572416, 1024, 1], [559, 1, 1]]", "[\"\", \"\"]", 0.009158656, 69.90911865234375},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        int rc = eval(v[i].name, v[i].bwd ? TL_PM_BWD : TL_PM_FWD, v[i].dims, v[i].types, v[i].strides, v[i].ci, &r);
        CHECK_EQ_I(rc, 0);
        if (rc) {
            fprintf(stderr, "  vector %zu (%s) failed\n", i, v[i].name);
            continue;
        }
        NEAR(r.gflops, v[i].gflops);
        if (isnan(v[i].mb)) CHECK(!r.has_bytes && isnan(r.data_moved_mb));
        else NEAR(r.data_moved_mb, v[i].mb);
    }
    /* spot checks of params from the same vectors */
    eval("aten::convolution_backward", TL_PM_FWD, v[1].dims, v[1].types, v[1].strides, v[1].ci, &r);
    CHECK_EQ_S(pstr(&r, "bias"), "[]");
    CHECK_EQ_S(pstr(&r, "convNd"), "conv2d");
    CHECK_EQ_S(pstr(&r, "stride"), "(1, 1)");
    CHECK_EQ_S(pstr(&r, "output_padding"), "(0, 0)");
    eval("aten::convolution", TL_PM_FWD, v[0].dims, v[0].types, v[0].strides, v[0].ci, &r);
    CHECK_EQ_S(pstr(&r, "bias"), "False"); /* 9 args: the bias tensor is never counted */
    eval("aten::native_group_norm_backward", TL_PM_FWD, v[9].dims, v[9].types, v[9].strides, v[9].ci, &r);
    CHECK_EQ_S(pstr(&r, "num_channels"), "4.0");
    CHECK_EQ_S(pstr(&r, "output_mask"), "[True, True, True]");
    eval("aten::mean", TL_PM_FWD, v[14].dims, v[14].types, v[14].strides, v[14].ci, &r);
    CHECK_EQ_S(pstr(&r, "num_output_elems"), "1");
    CHECK_EQ_S(pstr(&r, "dtype_in_out"), "('float', None)");
    CHECK_EQ_S(pstr(&r, "reduce_type"), "mean");
    eval("aten::upsample_nearest1d", TL_PM_FWD, v[17].dims, v[17].types, v[17].strides, v[17].ci, &r);
    CHECK_EQ_S(keys_of(&r), "input_shape,output_shape,op_shape,dtype_in_out,stride_input,stride_output");
    CHECK_EQ_S(pstr(&r, "dtype_in_out"), "('c10::BFloat16', 'c10::BFloat16')");
    /* mixed-width binary: a double scalar operand is charged 8 bytes, output at the tensor width */
    eval("aten::mul", TL_PM_FWD, "[[1, 5185, 4096], []]", "[\"c10::BFloat16\", \"double\"]",
         "[[21237760, 4096, 1], []]", "[\"\", \"\"]", &r);
    CHECK_EQ_S(fmtf(r.bytes), fmtf(21237760.0 * 2 + 8 + 21237760.0 * 2));
    /* causal halves, and causal N_Q != N_KV skips */
    eval("flash_attn::_flash_attn_forward", TL_PM_FWD, "[[2, 128, 4, 64], [2, 128, 4, 64], [2, 128, 4, 64]]",
         "[\"c10::Half\", \"c10::Half\", \"c10::Half\"]", "[[32768, 256, 64, 1], [32768, 256, 64, 1], [32768, 256, 64, 1]]",
         "[\"\", \"\", \"\", \"0.0\", \"0.125\", \"True\"]", &r);
    CHECK_EQ_S(fmtf(r.flops), fmtf(2.0 * 4 * 2 * 128 * 128 * 64));
    CHECK_EQ_S(r.compute_spec, "matrix_fp16");
    CHECK_EQ_I(eval("flash_attn::_flash_attn_forward", TL_PM_FWD, "[[2, 128, 4, 64], [2, 64, 4, 64], [2, 64, 4, 64]]",
                    "[\"c10::Half\", \"c10::Half\", \"c10::Half\"]",
                    "[[32768, 256, 64, 1], [16384, 256, 64, 1], [16384, 256, 64, 1]]",
                    "[\"\", \"\", \"\", \"0.0\", \"0.125\", \"True\"]", &r),
               TL_EFORMAT);
    /* CODE-only models: hand-computed from the spec text */
    CHECK_EQ_I(eval("primus_turbo::hipblaslt_gemm_fp8", TL_PM_FWD, "[[128, 256], [1], [256, 512], [1]]",
                    "[\"c10::Float8_e4m3fnuz\", \"float\", \"c10::Float8_e4m3fnuz\", \"float\"]", NULL,
                    "[\"\", \"\", \"\", \"\", \"\", \"False\", \"False\", \"False\"]", &r),
               0);
    CHECK_EQ_S(fmtf(r.flops), "33554432.0");
    CHECK_EQ_S(fmtf(r.bytes), "294912.0");
    CHECK_EQ_S(r.compute_spec, "matrix_fp8");
    CHECK_EQ_S(keys_of(&r), "M,N,K,bias,stride_A,stride_B,dtype_A_B,dtype_scaleA,dtype_scaleB,B");
    CHECK_EQ_I(eval("flash_attn::_flash_attn_varlen_forward", TL_PM_FWD, "[[10, 2, 8], [10, 2, 8], [10, 2, 8], [3], [3]]",
                    "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"int\", \"int\"]",
                    "[[16, 8, 1], [16, 8, 1], [16, 8, 1], [1], [1]]",
                    "[\"\", \"\", \"\", \"\", \"\", \"6\", \"6\", \"0.0\", \"0.35\", \"False\"]", &r),
               0);
    CHECK_EQ_S(fmtf(r.flops), "3328.0"); /* f(6,6) + 1 * f((10-6)//1, (10-6)//1), f = 64 N^2 */
    CHECK_EQ_S(pstr(&r, "max_seqlen_q"), "6.0");
    CHECK_EQ_S(pstr(&r, "num_seqs_q"), "2");
    CHECK_EQ_I(eval("primus_turbo::grouped_gemm", TL_PM_FWD, "[[64, 128], [4, 128, 256]]",
                    "[\"c10::BFloat16\", \"c10::BFloat16\"]", NULL, NULL, &r),
               0);
    CHECK_EQ_S(fmtf(r.flops), "4194304.0");
    CHECK_EQ_S(fmtf(r.bytes), "311296.0");
    CHECK_EQ_S(keys_of(&r), "M,K,N,G,bpe_in,bpe_out");
    CHECK_EQ_I(eval("primus_turbo::grouped_gemm_variable_k", TL_PM_FWD, "[[[64, 128], [32, 128]], [[128, 16], [128, 16]]]",
                    "[\"c10::BFloat16\", \"c10::BFloat16\"]", NULL, NULL, &r),
               0);
    CHECK_EQ_S(pstr(&r, "group_pairs"), "[((64, 128), (128, 16)), ((32, 128), (128, 16))]");
    CHECK_EQ_S(pstr(&r, "M"), "96");
    CHECK_EQ_I(eval("MambaSplitConv1dScanCombinedFn", TL_PM_BWD, "[[1, 8, 548], [288, 4], [288], [4]]",
                    "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"float\"]", NULL, NULL, &r),
               0);
    CHECK_EQ_S(pstr(&r, "N"), "16");
    CHECK_EQ_I(eval("MoEDispatch", TL_PM_FWD, "[[100, 64]]", "[\"c10::BFloat16\"]", NULL, NULL, &r), 0);
    CHECK(r.flops == 0 && r.bytes == 12800 && r.flops_per_byte == 0);
    CHECK_EQ_S(r.compute_spec, "");
    CHECK_EQ_I(eval("CrossEntropyFunction", TL_PM_FWD, "[[8, 1000]]", "[\"float\"]", NULL, NULL, &r), 0);
    CHECK(r.flops == 40000 && r.bytes == 32096);
    CHECK_EQ_I(eval("CrossEntropyFunction", TL_PM_BWD, "[[8, 1000]]", "[\"float\"]", NULL, NULL, &r), TL_EUNSUPPORTED);
    CHECK_EQ_I(eval("aiter::gemm_afp4wfp4_", TL_PM_FWD, "[[32, 64], [256, 64]]", "[\"fp4\", \"fp4\"]", NULL, NULL, &r), 0);
    CHECK_EQ_S(r.compute_spec, "matrix_fp4");
    CHECK_EQ_S(fmtf(r.bytes), fmtf(32.0 * 128 * 0.5 + 128.0 * 256 * 0.5 + 32.0 * 256 * 2));

    /* group_norm ignores the group count */
    eval("aten::group_norm", TL_PM_FWD, "[[8, 16, 32, 32], [], [16], [16], [], []]",
         "[\"float\", \"Scalar\", \"float\", \"float\", \"Scalar\", \"Scalar\"]",
         "[[16384, 1024, 32, 1], [], [1], [1], [], []]", "[\"\", \"4\", \"\", \"\", \"1e-05\", \"True\"]", &r);
    NEAR(r.gflops, 0.000655456);
}

/* ---------------------------------------------------------------------------
 * 4. failure modes */

static void test_failures(void)
{
    tl_pm_result r;
    CHECK_EQ_I(eval("aten::mm", TL_PM_BWD, "[[4, 8], [8, 16]]", "[\"float\", \"float\"]", NULL, NULL, &r),
               TL_EUNSUPPORTED);
    CHECK_EQ_I(eval("aten::addmm", TL_PM_FWD, NULL, "[\"float\"]", NULL, NULL, &r), TL_EFORMAT);
    CHECK_EQ_I(eval("aten::addmm", TL_PM_FWD, "[[4], [4, 8]]", "[\"float\", \"float\"]", NULL, NULL, &r), TL_EFORMAT);
    CHECK_EQ_I(eval("aten::mm", TL_PM_FWD, "not json", "[]", NULL, NULL, &r), TL_EFORMAT);
    CHECK_EQ_I(eval("aten::bmm", TL_PM_FWD, "[[4, 8], [8, 16]]", "[\"float\", \"float\"]", NULL, NULL, &r), TL_EFORMAT);
    CHECK_EQ_I(eval("aten::native_instance_norm_backward", TL_PM_FWD, "[[1, 2, 3]]", "[\"float\"]", "[[6, 3, 1]]",
                    "[\"\"]", &r),
               TL_EFORMAT);
    CHECK_EQ_I(eval("aten::add", TL_PM_FWD, "[[2, 3], [4, 3]]", "[\"float\", \"float\"]", "[[3, 1], [3, 1]]",
                    "[\"\", \"\"]", &r),
               TL_EFORMAT);
    CHECK_EQ_I(eval("aten::add", TL_PM_FWD, "[[2, 3], [2, 3]]", "[\"float\", \"float\"]", NULL, NULL, &r),
               TL_EFORMAT); /* unary/binary need Input Strides */
    CHECK_EQ_I(eval("_Linear_yfwd_mm", TL_PM_FWD, "[[4, 8], [8, 16]]", "[\"float\", \"c10::BFloat16\"]", NULL, NULL, &r),
               TL_EFORMAT); /* TE pseudo GEMM rejects mixed dtypes */
    CHECK_EQ_I(eval("aten::_scaled_mm", TL_PM_FWD, "[[4, 8], [8, 16]]", "[\"bool\", \"bool\"]", NULL, NULL, &r),
               TL_EFORMAT);
    CHECK_EQ_I(eval("ConvBias_Backward", TL_PM_FWD, "[[1]]", "[\"float\"]", NULL, NULL, &r), TL_EFORMAT);
    /* an unknown dtype leaves bytes unknown but keeps FLOPs */
    CHECK_EQ_I(eval("aten::mm", TL_PM_FWD, "[[4, 8], [8, 16]]", "[\"c10::complex<float>\", \"c10::complex<float>\"]",
                    NULL, NULL, &r),
               0);
    CHECK(!r.has_bytes && isnan(r.flops_per_byte) && r.flops == 1024);
    CHECK_EQ_S(r.compute_spec, "");
    /* ConvBias backward borrows the forward shapes through the context */
    {
        tl_pm_ctx *ctx = tl_pm_ctx_new();
        const tl_pm_op *fw = tl_pm_find("ConvBias_"), *bw = tl_pm_find("ConvBias_Backward");
        tl_pm_args fa = {.input_dims = "[[2, 8, 16, 16], [4, 8, 3, 3], [4]]",
                         .input_type = "[\"c10::Half\", \"c10::Half\", \"c10::Half\"]",
                         .concrete_inputs = "[\"\", \"\", \"\", \"1\", \"1\"]",
                         .has_seq = 1,
                         .seq = 77};
        tl_pm_args ba = {.input_dims = "[[2, 4, 16, 16]]", .input_type = "[\"c10::Half\"]", .has_seq = 1, .seq = 77};
        tl_err e;
        tl_pm_result rf, rb;
        CHECK_EQ_I(tl_pm_eval(fw, &fa, TL_PM_FWD, ctx, &A, &rf, &e), 0);
        CHECK_EQ_I(tl_pm_eval(bw, &ba, TL_PM_FWD, ctx, &A, &rb, &e), 0);
        CHECK_EQ_S(pstr(&rb, "input_shape"), "(2, 8, 16, 16)");
        CHECK_EQ_S(pstr(&rb, "bias"), "True");
        /* grad input + grad weight + bias: out (2,4,16,16) = 2048 */
        double gi = 2048.0 * 2 * 72, gw = 288.0 * 2 * 512;
        CHECK_EQ_S(fmtf(rb.flops), fmtf(gi + gw + 2048));
        ba.seq = 78;
        CHECK_EQ_I(tl_pm_eval(bw, &ba, TL_PM_FWD, ctx, &A, &rb, &e), TL_EFORMAT);
        tl_pm_ctx_free(ctx);
    }
    /* every model on hostile text: statuses only, never a crash */
    const char *texts[] = {NULL, "[]", "[[]]", "[[1]]", "[[1, 2, 3]]", "[[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]",
                           "[[-1, 5], [5, -3], [-2]]", "[\"x\"]", "[null, null, null]", "[[1e300, 2]]",
                           "[[9223372036854775807, 9223372036854775807, 9223372036854775807]]", "{}", "\"s\"",
                           "[[2, 3, 4, 5, 6, 7], [1, 2, 3, 4, 5, 6], [2, 2, 2, 2, 2, 2], [1], [1], [1], [1]]",
                           "[\"\", \"\", \"\", \"[1, 1]\", \"[0]\", \"[1]\", \"True\", \"[0]\", \"0\", \"4\", \"[True]\"]",
                           "[\"float\", \"float\", \"float\", \"float\", \"float\", \"float\"]", "[[", "[1, [2, [3]]]"};
    size_t nt = sizeof texts / sizeof texts[0];
    size_t runs = 0;
    for (size_t i = 0; i < tl_pm_nops(); i++) {
        const tl_pm_op *op = tl_pm_op_at(i);
        for (size_t d = 0; d < nt; d++)
            for (size_t t = 0; t < nt; t += 3)
                for (int m = 0; m < 2; m++) {
                    tl_pm_args a = {.input_dims = texts[d], .input_type = texts[t], .input_strides = texts[(d + t) % nt],
                                    .concrete_inputs = texts[(d * 7 + t) % nt], .has_seq = 1, .seq = 5};
                    tl_err e;
                    int rc = tl_pm_eval(op, &a, m ? TL_PM_BWD : TL_PM_FWD, NULL, &A, &r, &e);
                    CHECK(rc == 0 || rc == TL_EFORMAT || rc == TL_EUNSUPPORTED);
                    runs++;
                }
    }
    printf("hostile-input runs: %zu\n", runs);
}

/* ---------------------------------------------------------------------------
 * 5. arch tables and roofline */

static char repo_root[4096];

static void find_repo_root(void)
{
    /* __FILE__ is .../tests/unit/test_perfmodel.c in a CMake build */
    snprintf(repo_root, sizeof repo_root, "%s", __FILE__);
    char *p = strstr(repo_root, "/tests/unit/");
    if (p) *p = 0;
    else snprintf(repo_root, sizeof repo_root, ".");
}

static void test_arch(void)
{
    CHECK_EQ_S(tl_pm_arch_platform_for_gpu("AMD Instinct MI300X"), "MI300X");
    CHECK_EQ_S(tl_pm_arch_platform_for_gpu("AMD Instinct MI325X"), "MI325X");
    CHECK_EQ_S(tl_pm_arch_platform_for_gpu("AMD Instinct MI355X"), "MI355X");
    CHECK_EQ_S(tl_pm_arch_platform_for_gpu("NVIDIA H100 80GB HBM3"), "H100_SXM");
    CHECK_EQ_S(tl_pm_arch_platform_for_gpu("NVIDIA H200"), "H200");
    CHECK_EQ_S(tl_pm_arch_platform_for_gpu("NVIDIA B200"), "B200");
    CHECK(tl_pm_arch_platform_for_gpu("NVIDIA H100 PCIe") == NULL);
    CHECK(tl_pm_arch_platform_for_gpu("NVIDIA GB200") == NULL);
    CHECK(tl_pm_arch_platform_for_gpu(NULL) == NULL);

    tl_pm_arch *arch = NULL;
    tl_err e = {0};
    const char *js = "{\"name\": \"MI300X\", \"mem_bw_gbps\": 5300, \"memory_gb\": 192, \"max_achievable_tflops\": "
                     "{\"matrix_bf16\": 708, \"vector_bf16\": 163}}";
    CHECK_EQ_I(tl_pm_arch_parse(js, strlen(js), &arch, &e), 0);
    double pk = 0;
    CHECK(tl_pm_arch_peak(arch, "matrix_bf16", &pk) == 0 && pk == 708);
    CHECK(tl_pm_arch_peak(arch, "matrix_fp8", &pk) != 0);
    tl_pm_roofline rf;
    /* §9.1 illustration: memory bound, 0.1536 µs */
    tl_pm_roofline_eval(arch, 0.0739968, 1, 814080, "matrix_bf16", 4.72900390625, &rf);
    CHECK(rf.valid);
    CHECK_EQ_S(rf.bound, "MEMORY_BOUND");
    NEAR(rf.compute_us, 0.0739968e9 / 708e12 * 1e6);
    NEAR(rf.time_us, 814080 / 5300e9 * 1e6);
    /* §9.2 illustration: Pct Roofline 29.60 % */
    tl_pm_roofline_eval(arch, 4.41119205, 1, 40067160, "matrix_bf16", 25.537109375, &rf);
    CHECK(rf.valid && fabs(rf.pct - 29.60) < 0.01 && fabs(rf.compute_us - 6.2305) < 1e-4);
    tl_pm_roofline_eval(arch, 4.41119205, 1, 40067160, "matrix_bf16", 0, &rf);
    CHECK(rf.valid && isnan(rf.pct));
    tl_pm_roofline_eval(arch, 4.4, 0, 0, "matrix_bf16", 1, &rf);
    CHECK(!rf.valid); /* bytes unknown */
    tl_pm_roofline_eval(arch, 0, 1, 10, "matrix_bf16", 1, &rf);
    CHECK(!rf.valid); /* GFLOPS 0 */
    tl_pm_roofline_eval(arch, 1, 1, 10, "vector_fp8", 1, &rf);
    CHECK(!rf.valid); /* no peak for the spec */
    tl_pm_arch_free(arch);
    CHECK(tl_pm_arch_parse("[1]", 3, &arch, &e) == TL_EFORMAT);
    CHECK(tl_pm_arch_parse("{\"max_achievable_tflops\": {\"a\": \"x\"}}", 37, &arch, &e) == TL_EFORMAT);

    /* the shipped tables */
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/data", repo_root);
    const char *plats[] = {"MI300X", "MI325X", "MI355X", "H100_SXM", "H200", "B200"};
    for (size_t i = 0; i < 6; i++) {
        arch = NULL;
        int rc = tl_pm_arch_load_platform(dir, plats[i], &arch, &e);
        CHECK_EQ_I(rc, 0);
        if (rc) {
            fprintf(stderr, "  %s: %s\n", plats[i], e.msg);
            continue;
        }
        CHECK(arch->has_mem_bw && arch->mem_bw_gbps > 1000);
        CHECK(tl_pm_arch_peak(arch, "matrix_bf16", &pk) == 0 && pk > 100);
        CHECK(tl_pm_arch_peak(arch, "vector_fp32", &pk) == 0 && pk > 10);
        tl_pm_arch_free(arch);
    }
    arch = NULL;
    CHECK_EQ_I(tl_pm_arch_load_platform(dir, "mi300x", &arch, &e), 0); /* upper-cased retry */
    if (arch) {
        CHECK(tl_pm_arch_peak(arch, "matrix_fp8", &pk) == 0 && pk == 1273);
        CHECK(arch->mem_bw_gbps == 5300);
        tl_pm_arch_free(arch);
    }
    arch = NULL;
    CHECK_EQ_I(tl_pm_arch_load_platform(dir, "MI325X", &arch, &e), 0);
    if (arch) {
        CHECK(tl_pm_arch_peak(arch, "matrix_bf16", &pk) == 0 && pk == 843);
        CHECK(arch->mem_bw_gbps == 6000);
        tl_pm_arch_free(arch);
    }
    CHECK(tl_pm_arch_load_platform(dir, "../etc/passwd", &arch, &e) == TL_EUSAGE);
    CHECK(tl_pm_arch_load_platform(dir, "NOPE", &arch, &e) == TL_ENOTFOUND);
}

/* ---------------------------------------------------------------------------
 * 6. kernel summaries and sheets */

static const char *GEMM_KERNEL =
    "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x128_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_"
    "DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA256_LBSPPB256_LBSPPM0_LPA16_LPB16_"
    "LPM0_LRVW8_LWPMn1_MIAV0_MIWT1_1_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_"
    "SIA3_SS1_SPO0_SRVW0_SSO0_SVW1_SK0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_"
    "WS64_WG16_4_4";

/* the 17 aten::addmm instances of the BERT trace (pytorch-report.md §14.3) */
static const int64_t ADDMM_UIDS[17] = {48, 60, 72, 115, 161, 173, 185, 228, 274, 286, 298, 341, 387, 399, 411, 454, 500};
static const double ADDMM_T[17] = {5.3310546875, 5.0908203125, 4.97021484375, 5.4111328125, 4.89013671875,
                                   4.77001953125, 4.89013671875, 4.89013671875, 5.2509765625, 4.85009765625,
                                   4.85009765625, 5.0498046875, 5.009765625, 4.72900390625, 5.05078125,
                                   5.2109375, 5.4912109375};
static const double ADDMM_DUR[17] = {5.331, 5.091, 4.970, 5.411, 4.890, 4.770, 4.890, 4.890, 5.251,
                                     4.850, 4.850, 5.050, 5.010, 4.729, 5.051, 5.211, 5.491};

/* A test event: the fields a report's source would read from its trace,
 * with its kernel sets. The sheets get instances whose row is the event's
 * index and a source reading these (test_source). */
typedef struct tkset {
    double time_us;
    const tl_pm_kernel *k;
    size_t n;
} tkset;
typedef struct tdesc {
    int64_t uid;
    const char *name, *process_name, *process_label, *thread_name;
    const char *input_dims, *input_type, *input_strides, *concrete_inputs;
    tkset fwd;
    int has_bwd_events;
    tkset bwd;
    int is_recompute;
} tdesc;

static const tdesc *g_desc;            /* the events of the current call */
static const tl_pm_kernel *g_kern[64]; /* kernel handle -> kernel */

static const char *t_name(const void *src, const tl_pm_instance *in)
{
    (void)src;
    return g_desc[in->row].name;
}

static void t_fields(const void *src, const tl_pm_instance *in, tl_pm_fields *f)
{
    (void)src;
    const tdesc *d = &g_desc[in->row];
    *f = (tl_pm_fields){.name = d->name, .uid = d->uid, .process_name = d->process_name,
                        .process_label = d->process_label, .thread_name = d->thread_name,
                        .input_dims = d->input_dims, .input_type = d->input_type,
                        .input_strides = d->input_strides, .concrete_inputs = d->concrete_inputs};
}

static void t_kernel(const void *src, int32_t k, tl_pm_kernel *out)
{
    (void)src;
    *out = *g_kern[k];
}

static const tl_pm_source test_source = {NULL, t_name, t_fields, t_kernel};

/* The instances of d[0 .. n) (in A), their kernels registered in g_kern. */
static tl_pm_instance *instances(const tdesc *d, size_t n)
{
    size_t nk = 0;
    g_desc = d;
    tl_pm_instance *in = tl_arena_zalloc(&A, (n ? n : 1) * sizeof *in);
    for (size_t i = 0; i < n; i++) {
        size_t tot = d[i].fwd.n + d[i].bwd.n;
        int32_t *k = tl_arena_alloc(&A, (tot ? tot : 1) * sizeof *k);
        for (size_t j = 0; j < tot; j++) {
            CHECK(nk < sizeof g_kern / sizeof g_kern[0]);
            g_kern[nk] = j < d[i].fwd.n ? &d[i].fwd.k[j] : &d[i].bwd.k[j - d[i].fwd.n];
            k[j] = (int32_t)nk++;
        }
        in[i] = (tl_pm_instance){.k = tot ? k : NULL, .fwd_time_us = d[i].fwd.time_us,
                                 .bwd_time_us = d[i].bwd.time_us, .row = (int32_t)i,
                                 .nfwd = (uint32_t)d[i].fwd.n, .nbwd = (uint32_t)d[i].bwd.n,
                                 .has_bwd_events = (int8_t)d[i].has_bwd_events,
                                 .is_recompute = (int8_t)d[i].is_recompute};
    }
    return in;
}

static int family_sheets(const char *family, const tdesc *d, size_t n, const tl_pm_sheet_opts *o, tl_table **g,
                         tl_table **b, tl_err *e)
{
    return tl_pm_family_sheets(family, &test_source, instances(d, n), n, o, g, b, e);
}

static tl_pm_kernel addmm_k[17];
static tdesc addmm_inst[17];

static void make_addmm(void)
{
    for (int i = 0; i < 17; i++) {
        addmm_k[i] = (tl_pm_kernel){.name = GEMM_KERNEL, .dur = ADDMM_DUR[i], .has_stream = 1, .stream = 0};
        addmm_inst[i] = (tdesc){
            .uid = ADDMM_UIDS[i],
            .name = "aten::addmm",
            .process_name = "python3",
            .process_label = "CPU",
            .thread_name = "thread 6240 (python3)",
            .input_dims = "[[512], [141, 512], [512, 512], [], []]",
            .input_type = "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]",
            .input_strides = "[[1], [512, 1], [1, 512], [], []]",
            .concrete_inputs = "[\"\", \"\", \"\", \"1\", \"1\"]",
            .fwd = {.time_us = ADDMM_T[i], .k = &addmm_k[i], .n = 1},
            .is_recompute = -1,
        };
    }
}

static void test_kdetails(void)
{
    tl_pm_kernel k[4] = {{"attn_fwd", 32.032, 1, 0}, {"attn_fwd", 26.981, 1, 0}, {"attn_fwd", 27.341, 1, 0},
                         {"attn_fwd", 27.302, 1, 0}};
    const tl_pm_kernel *lists[4] = {&k[0], &k[1], &k[2], &k[3]};
    size_t lens[4] = {1, 1, 1, 1};
    tl_buf s = {0}, t = {0};
    CHECK_EQ_I(tl_pm_kdetails_summarize(lists, lens, 4, &s, &t), 1);
    tl_buf_putc(&s, 0);
    tl_buf_putc(&t, 0);
    CHECK_EQ_S(s.p, "[{'name': 'attn_fwd', 'stream': 0, 'count': 4, 'total_duration_us': np.float64(113.656), "
                    "'mean_duration_us': np.float64(28.414), 'median_duration_us': np.float64(27.3215), "
                    "'std_dev_duration_us': np.float64(2.0935189275475854), 'min_duration_us': np.float64(26.981), "
                    "'max_duration_us': np.float64(32.032)}]");
    CHECK_EQ_S(t.p, "[{'name': 'attn_fwd', 'stream': 0, 'mean_duration_us': np.float64(28.41)}]");
    tl_buf_free(&s);
    tl_buf_free(&t);

    /* 17 durations: NumPy's pairwise sum path */
    const tl_pm_kernel *l17[17];
    size_t n17[17];
    for (int i = 0; i < 17; i++) {
        l17[i] = &addmm_k[i];
        n17[i] = 1;
    }
    {
        tl_buf a = {0}, b = {0};
        tl_pm_kdetails_summarize(l17, n17, 17, &a, &b);
        tl_buf_putc(&a, 0);
        tl_buf_putc(&b, 0);
        CHECK(strstr(a.p, "'count': 17, 'total_duration_us': np.float64(85.736), 'mean_duration_us': "
                          "np.float64(5.043294117647059), 'median_duration_us': np.float64(5.01), "
                          "'std_dev_duration_us': np.float64(0.2192558979569931), 'min_duration_us': "
                          "np.float64(4.729), 'max_duration_us': np.float64(5.491)}]") != NULL);
        CHECK_EQ_S(b.p, "[{'name': 'Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x128_MI16x1...', "
                        "'stream': 0, 'mean_duration_us': np.float64(5.04)}]");
        tl_buf_free(&a);
        tl_buf_free(&b);
    }
    /* no kernels: "[]" and no trunc cell; lists of another length are skipped */
    size_t z[2] = {0, 0};
    tl_buf e = {0};
    CHECK_EQ_I(tl_pm_kdetails_summarize(l17, z, 2, &e, NULL), 0);
    tl_buf_putc(&e, 0);
    CHECK_EQ_S(e.p, "[]");
    tl_buf_free(&e);
    tl_pm_kernel two[2] = {{"b", 2.0, 1, 7}, {"a", 1.0, 0, 0}};
    const tl_pm_kernel *l3[3] = {two, &k[0], two};
    size_t n3[3] = {2, 1, 2};
    tl_buf f = {0};
    tl_pm_kdetails_summarize(l3, n3, 3, &f, NULL);
    tl_buf_putc(&f, 0);
    CHECK(strncmp(f.p, "[{'name': 'a', 'stream': None, 'count': 2, 'total_duration_us': np.float64(2.0)", 78) == 0);
    tl_buf_free(&f);
}

static const char *cell(const tl_table *t, const char *col, size_t row)
{
    long c = tl_table_col(t, col);
    if (c < 0) return "<nocol>";
    char buf[64];
    const char *s = tl_table_cell_text(t, (size_t)c, row, buf, sizeof buf);
    return tl_arena_strdup(&A, s);
}

static void test_sheets(void)
{
    tl_pm_sheet_opts o = {0};
    tl_table *g = NULL, *b = NULL;
    tl_err e;
    CHECK_EQ_I(family_sheets("GEMM", addmm_inst, 17, &o, &g, &b, &e), 0);
    CHECK(g && !b);
    if (!g) return;
    const char *hdr[] = {"name", "param: M", "param: N", "param: K", "param: bias", "param: stride_A", "param: stride_B",
                         "param: dtype_A_B", "param: B", "param: transpose", "GFLOPS_first", "Data Moved (MB)_first",
                         "FLOPS/Byte_first", "TB/s_mean", "TB/s_median", "TB/s_std", "TB/s_min", "TB/s_max",
                         "TFLOPS/s_mean", "TFLOPS/s_median", "TFLOPS/s_std", "TFLOPS/s_min", "TFLOPS/s_max",
                         "process_name_first", "process_label_first", "thread_name_first", "Compute Spec",
                         "kernel_details__summarize_kernel_stats", "trunc_kernel_details", "Input Dims_first",
                         "Input type_first", "Input Strides_first", "Concrete Inputs_first",
                         "Kernel Time (\xc2\xb5s)_mean", "Kernel Time (\xc2\xb5s)_median",
                         "Kernel Time (\xc2\xb5s)_std", "Kernel Time (\xc2\xb5s)_min", "Kernel Time (\xc2\xb5s)_max",
                         "Kernel Time (\xc2\xb5s)_sum", "name_count", "UID_first"};
    CHECK_EQ_I(g->ncols, sizeof hdr / sizeof hdr[0]);
    for (size_t i = 0; i < g->ncols && i < sizeof hdr / sizeof hdr[0]; i++) CHECK_EQ_S(g->cols[i].name, hdr[i]);
    CHECK_EQ_I(g->nrows, 1);
    CHECK_EQ_S(g->name, "GEMM");
    CHECK_EQ_S(cell(g, "Kernel Time (\xc2\xb5s)_sum", 0), "85.736328125");
    CHECK_EQ_S(cell(g, "Kernel Time (\xc2\xb5s)_mean", 0), "5.043313419117647");
    CHECK_EQ_S(cell(g, "Kernel Time (\xc2\xb5s)_median", 0), "5.009765625");
    CHECK_EQ_S(cell(g, "Kernel Time (\xc2\xb5s)_std", 0), "0.22600854465708484");
    CHECK_EQ_S(cell(g, "TFLOPS/s_max", 0), "15.64743896747548");
    CHECK_EQ_S(cell(g, "TB/s_max", 0), "0.17214618895198763");
    CHECK_EQ_S(cell(g, "TFLOPS/s_mean", 0), "14.69942963776174");
    CHECK_EQ_S(cell(g, "TB/s_std", 0), "0.007093321468841064");
    CHECK_EQ_S(cell(g, "name_count", 0), "17");
    CHECK_EQ_S(cell(g, "UID_first", 0), "48");
    CHECK_EQ_S(cell(g, "param: transpose", 0), "(True, False)");
    CHECK_EQ_S(cell(g, "param: B", 0), "1");
    CHECK_EQ_S(cell(g, "Input Dims_first", 0), "[[512], [141, 512], [512, 512], [], []]");
    CHECK_EQ_S(cell(g, "Input type_first", 0), "['c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'Scalar', 'Scalar']");
    CHECK_EQ_S(cell(g, "Concrete Inputs_first", 0), "['', '', '', '1', '1']");
    tl_table_free(g);

    /* roofline columns follow Compute Spec when an arch is given */
    tl_pm_arch *arch;
    const char *js = "{\"name\": \"MI300X\", \"mem_bw_gbps\": 5300, \"max_achievable_tflops\": {\"matrix_bf16\": 708}}";
    tl_pm_arch_parse(js, strlen(js), &arch, &e);
    o.arch = arch;
    family_sheets("GEMM", addmm_inst, 17, &o, &g, &b, &e);
    if (g) {
        CHECK_EQ_S(g->cols[27].name, "Roofline Time (\xc2\xb5s)_first");
        CHECK_EQ_S(g->cols[28].name, "Roofline Bound_first");
        CHECK_EQ_S(g->cols[29].name, "Pct Roofline_mean");
        CHECK_EQ_S(cell(g, "Roofline Bound_first", 0), "MEMORY_BOUND");
        CHECK_EQ_S(cell(g, "Roofline Time (\xc2\xb5s)_first", 0), fmtf(814080 / (5300 * 1e9) * 1e6));
        tl_table_free(g);
    }
    o.arch = NULL;
    tl_pm_arch_free(arch);

    /* group_by_num_kernels / detect_recompute add key columns after the params */
    o.group_by_num_kernels = 1;
    o.detect_recompute = 1;
    addmm_inst[3].is_recompute = 1;
    family_sheets("GEMM", addmm_inst, 17, &o, &g, &b, &e);
    if (g) {
        CHECK_EQ_S(g->cols[10].name, "num_kernels");
        CHECK_EQ_S(g->cols[11].name, "is_recompute");
        CHECK_EQ_I(g->nrows, 2); /* is_recompute missing / True */
        tl_table_free(g);
    }
    addmm_inst[3].is_recompute = -1;
    o.group_by_num_kernels = o.detect_recompute = 0;

    /* CONV: convolution_backward moves to CONV_bwd, forward convs stay out of it */
    const char *cdims = "[[4, 3, 224, 224], [768, 3, 16, 16], [768], [], [], [], [], [], []]";
    const char *ctypes = "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"ScalarList\", \"ScalarList\", "
                         "\"ScalarList\", \"Scalar\", \"ScalarList\", \"Scalar\"]";
    const char *cstr = "[[150528, 50176, 224, 1], [768, 256, 16, 1], [1], [], [], [], [], [], []]";
    const char *cci = "[\"\", \"\", \"\", \"[16, 16]\", \"[0, 0]\", \"[1, 1]\", \"False\", \"[0, 0]\", \"1\"]";
    tl_pm_kernel ck = {"conv_fwd_kernel", 10.0, 1, 0}, cb = {"conv_bwd_kernel", 20.0, 1, 0};
    tdesc conv[3] = {
        {.uid = 5, .name = "aten::convolution", .input_dims = cdims, .input_type = ctypes, .input_strides = cstr,
         .concrete_inputs = cci, .fwd = {10.0, &ck, 1}, .has_bwd_events = 1, .bwd = {20.0, &cb, 1},
         .is_recompute = -1},
        {.uid = 9, .name = "aten::convolution_backward",
         .input_dims = "[[4, 768, 14, 14], [4, 3, 224, 224], [768, 3, 16, 16], [768], [], [], [], [], [], [], []]",
         .input_type = "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"ScalarList\", \"ScalarList\", "
                       "\"ScalarList\", \"ScalarList\", \"Scalar\", \"ScalarList\", \"Scalar\", \"ScalarList\"]",
         .input_strides = "[[150528, 196, 14, 1], [150528, 50176, 224, 1], [768, 256, 16, 1], [1], [], [], [], [], [], [], []]",
         .concrete_inputs = "[\"\", \"\", \"\", \"[768]\", \"[16, 16]\", \"[0, 0]\", \"[1, 1]\", \"False\", \"[0, 0]\", "
                            "\"1\", \"[False, True, True]\"]",
         .fwd = {20.0, &cb, 1}, .is_recompute = -1},
        {.uid = 12, .name = "aten::add", .is_recompute = -1},
    };
    family_sheets("CONV", conv, 3, &o, &g, &b, &e);
    CHECK(g && b);
    if (g) {
        CHECK_EQ_S(g->name, "CONV_fwd");
        CHECK_EQ_I(g->nrows, 1);
        CHECK_EQ_S(cell(g, "name", 0), "aten::convolution");
        tl_table_free(g);
    }
    if (b) {
        CHECK_EQ_S(b->name, "CONV_bwd");
        CHECK_EQ_I(b->nrows, 1);
        CHECK_EQ_S(cell(b, "name", 0), "aten::convolution_backward");
        CHECK_EQ_S(cell(b, "param: bias", 0), "True"); /* Dims[3] = [768] non-empty */
        tl_table_free(b);
    }

    /* SDPA: the forward op in backward mode feeds SDPA_bwd; no bwd events -> no row */
    const char *qkv = "[[1, 8, 141, 64], [1, 8, 141, 64], [1, 8, 141, 64], [], [], [], []]";
    const char *qkvt = "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\"]";
    const char *qkvci = "[\"\", \"\", \"\", \"0.\", \"False\", \"False\", \"0.125\"]";
    tdesc at[2] = {
        {.uid = 1, .name = "aten::_scaled_dot_product_flash_attention", .input_dims = qkv, .input_type = qkvt,
         .concrete_inputs = qkvci, .has_bwd_events = 1, .bwd = {30.0, &cb, 1}, .is_recompute = -1},
        {.uid = 2, .name = "aten::_scaled_dot_product_flash_attention", .input_dims = qkv, .input_type = qkvt,
         .concrete_inputs = qkvci, .is_recompute = -1},
    };
    family_sheets("SDPA", at, 2, &o, &g, &b, &e);
    CHECK(g && b);
    if (g) {
        CHECK_EQ_S(cell(g, "name_count", 0), "2");
        /* no kernels at all: the integer-0 busy time keeps min/max/sum integral */
        CHECK_EQ_S(cell(g, "Kernel Time (\xc2\xb5s)_sum", 0), "0");
        CHECK_EQ_S(cell(g, "Kernel Time (\xc2\xb5s)_mean", 0), "0.0");
        CHECK_EQ_S(cell(g, "Kernel Time (\xc2\xb5s)_std", 0), "0.0");
        CHECK_EQ_S(cell(g, "TFLOPS/s_mean", 0), "");
        CHECK_EQ_S(cell(g, "kernel_details__summarize_kernel_stats", 0), "[]");
        CHECK_EQ_S(cell(g, "trunc_kernel_details", 0), "");
        tl_table_free(g);
    }
    if (b) {
        CHECK_EQ_I(b->nrows, 1);
        CHECK_EQ_S(cell(b, "name_count", 0), "1");
        CHECK_EQ_S(cell(b, "Kernel Time (\xc2\xb5s)_sum", 0), "30.0");
        tl_table_free(b);
    }

    /* Normalization: a float num_channels anywhere makes the whole column float */
    tdesc nm[2] = {
        {.uid = 1, .name = "aten::layer_norm", .input_dims = "[[1, 141, 512], [], [512], [512], [], []]",
         .input_type = "[\"c10::BFloat16\", \"ScalarList\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]",
         .input_strides = "[[72192, 512, 1], [], [1], [1], [], []]",
         .concrete_inputs = "[\"\", \"[512]\", \"\", \"\", \"1e-12\", \"True\"]", .is_recompute = -1},
        {.uid = 2, .name = "aten::native_group_norm_backward",
         .input_dims = "[[8, 16, 32, 32], [8, 16, 32, 32], [8, 4], [8, 4], [16], [], [], [], [], []]",
         .input_type = "[\"float\", \"float\", \"float\", \"float\", \"float\", \"Scalar\", \"Scalar\", \"Scalar\", "
                       "\"Scalar\", \"ScalarList\"]",
         .input_strides = "[[16384, 1024, 32, 1], [16384, 1024, 32, 1], [4, 1], [4, 1], [1], [], [], [], [], []]",
         .concrete_inputs = "[\"\", \"\", \"\", \"\", \"\", \"8\", \"16\", \"1024\", \"4\", \"[True, True, True]\"]",
         .is_recompute = -1},
    };
    family_sheets("Normalization", nm, 2, &o, &g, &b, &e);
    if (g) {
        CHECK_EQ_I(g->nrows, 2);
        CHECK_EQ_S(cell(g, "param: num_channels", 0), "512.0");
        CHECK_EQ_S(cell(g, "param: num_channels", 1), "4.0");
        CHECK_EQ_S(cell(g, "param: output_mask", 0), "");
        CHECK_EQ_S(cell(g, "param: stride_output", 0), "");
        tl_table_free(g);
    }
    family_sheets("Normalization", nm, 1, &o, &g, &b, &e);
    if (g) {
        CHECK_EQ_S(cell(g, "param: num_channels", 0), "512");
        tl_table_free(g);
    }
    /* nothing modelled: no sheet */
    family_sheets("Reduce", nm, 2, &o, &g, &b, &e);
    CHECK(g == NULL && b == NULL);

    /* unified-summary helper: per-instance metrics */
    tl_pm_metrics m;
    const tl_pm_instance *ai = instances(addmm_inst, 17);
    CHECK_EQ_I(tl_pm_metrics_eval(tl_pm_find("aten::addmm"), &test_source, &ai[13], TL_PM_FWD, NULL, NULL, &A, &m, &e), 0);
    CHECK_EQ_S(fmtf(m.tflops_s), "15.64743896747548");
    CHECK_EQ_S(fmtf(m.tb_s), "0.17214618895198763");
    CHECK(tl_pm_metrics_eval(tl_pm_find("aten::addmm"), &test_source, &ai[13], TL_PM_BWD, NULL, NULL, &A, &m, &e) != 0);
}

/* ---------------------------------------------------------------------------
 * 7. golden sweep over the reference perf CSVs */

typedef struct csv {
    char *data;
    char **hdr;
    size_t ncols;
    char ***rows;
    size_t nrows;
} csv;

static void csv_free(csv *c)
{
    for (size_t r = 0; r < c->nrows; r++) free(c->rows[r]);
    free(c->rows);
    free(c->hdr);
    free(c->data);
    memset(c, 0, sizeof *c);
}

/* RFC 4180 reader, fields unquoted in place */
static int csv_read(const char *path, csv *c)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    c->data = malloc((size_t)n + 1);
    if (fread(c->data, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        return -1;
    }
    fclose(f);
    c->data[n] = 0;
    char *p = c->data, *end = c->data + n;
    TL_VEC(char *) fields = {0};
    TL_VEC(char **) rows = {0};
    size_t ncols = 0;
    while (p < end) {
        fields.n = 0;
        for (;;) {
            char *out = p, *start = p;
            if (*p == '"') {
                p++;
                for (;;) {
                    if (p >= end) break;
                    if (*p == '"') {
                        if (p + 1 < end && p[1] == '"') {
                            *out++ = '"';
                            p += 2;
                            continue;
                        }
                        p++;
                        break;
                    }
                    *out++ = *p++;
                }
            } else {
                while (p < end && *p != ',' && *p != '\n' && *p != '\r') *out++ = *p++;
            }
            char term = p < end ? *p : '\n';
            /* step over the terminator before NUL-terminating in place */
            if (term == ',') p++;
            else {
                if (term == '\r') p++;
                if (p < end && *p == '\n') p++;
            }
            *out = 0;
            tl_vec_push(&fields, start);
            if (term == ',') continue;
            break;
        }
        if (!c->hdr) {
            ncols = fields.n;
            c->hdr = malloc(ncols * sizeof(char *));
            memcpy(c->hdr, fields.v, ncols * sizeof(char *));
            c->ncols = ncols;
        } else {
            char **row = calloc(ncols, sizeof(char *));
            for (size_t i = 0; i < ncols; i++) row[i] = i < fields.n ? fields.v[i] : "";
            tl_vec_push(&rows, row);
        }
    }
    tl_vec_free(&fields);
    c->rows = rows.v;
    c->nrows = rows.n;
    return 0;
}

static long csv_col(const csv *c, const char *name)
{
    for (size_t i = 0; i < c->ncols; i++)
        if (!strcmp(c->hdr[i], name)) return (long)i;
    return -1;
}

static int is_missing_text(const char *s) { return !*s || !strcmp(s, "nan") || !strcmp(s, "None"); }

static struct {
    size_t files, rows, rows_modelled, rows_unmodelled, cells, mismatches, exact_text, float_cells, float_inexact;
    size_t literal_roundtrips, literal_mismatch;
} G;

static void mismatch(const char *file, size_t row, const char *name, const char *col, const char *ref, const char *ours)
{
    G.mismatches++;
    if (G.mismatches <= 40)
        fprintf(stderr, "MISMATCH %s row %zu %s [%s]: ref '%s' ours '%s'\n", file, row, name, col, ref, ours);
}

static void cmp_float(const char *file, size_t row, const char *name, const char *col, const char *ref, double ours)
{
    G.cells++;
    if (is_missing_text(ref)) {
        if (!isnan(ours)) mismatch(file, row, name, col, ref, fmtf(ours));
        return;
    }
    G.float_cells++;
    double rv = strtod(ref, NULL);
    if (isnan(ours) || fabs(rv - ours) > 1e-6) mismatch(file, row, name, col, ref, fmtf(ours));
    else if (!strcmp(fmtf(ours), ref) || rv == ours) G.exact_text++; /* same double; 1232 vs 1232.0 */
    else {
        G.float_inexact++;
        if (getenv("TL_PM_VERBOSE")) fprintf(stderr, "inexact %s row %zu %s [%s]: ref %s ours %s\n", file, row, name, col, ref, fmtf(ours));
    }
}

/* param cell: ref text vs our value (absent key = missing) */
static void cmp_param(const char *file, size_t row, const char *name, const char *col, const char *ref,
                      const tl_pm_result *r)
{
    const char *key = col + 7;
    const tl_pv *ours = NULL;
    int found = 0;
    for (size_t i = 0; i < r->nparams; i++)
        if (!strcmp(r->params[i].key, key)) {
            ours = r->params[i].val;
            found = 1;
        }
    G.cells++;
    int ours_missing = !found || tl_pv_is_none(ours);
    tl_buf b = {0};
    if (found) tl_pv_write_str(&b, ours, 0);
    tl_buf_putc(&b, 0);
    if (is_missing_text(ref)) {
        if (!ours_missing) mismatch(file, row, name, col, ref, b.p);
        tl_buf_free(&b);
        return;
    }
    if (ours_missing) {
        mismatch(file, row, name, col, ref, found ? "None" : "<absent>");
        tl_buf_free(&b);
        return;
    }
    tl_pv *rv;
    tl_err e;
    int ok;
    if (tl_pv_parse(&A, ref, strlen(ref), &rv, &e) == 0) ok = tl_pv_equal(rv, ours);
    else ok = !strcmp(ref, b.p); /* bare text such as conv2d, mean */
    if (!ok) mismatch(file, row, name, col, ref, b.p);
    else if (!strcmp(ref, b.p)) G.exact_text++;
    tl_buf_free(&b);
}

/* the *_first arg texts, Compute Spec text and kernel summaries must survive parse + repr unchanged */
static void roundtrip_literal(const char *file, size_t row, const char *col, const char *text)
{
    if (!*text) return;
    G.literal_roundtrips++;
    const char *back = repr(text, 0);
    if (strcmp(back, text)) {
        G.literal_mismatch++;
        if (G.literal_mismatch <= 10) fprintf(stderr, "ROUNDTRIP %s row %zu [%s]:\n  %s\n  %s\n", file, row, col, text, back);
    }
}

static const char *SET_ASIDE[] = {"flash_attn::_flash_attn_varlen_backward", "aten::convolution_backward",
                                  "ConvBias_Backward", "ConvBiasReLU_Backward", NULL};

static void sweep_file(const char *path, const char *sheet)
{
    csv c;
    if (csv_read(path, &c) != 0 || !c.hdr) {
        csv_free(&c);
        return;
    }
    G.files++;
    long cn = csv_col(&c, "name"), cd = csv_col(&c, "Input Dims_first"), ct = csv_col(&c, "Input type_first"),
         cs = csv_col(&c, "Input Strides_first"), cc = csv_col(&c, "Concrete Inputs_first"),
         cg = csv_col(&c, "GFLOPS_first"), cm = csv_col(&c, "Data Moved (MB)_first"),
         cf = csv_col(&c, "FLOPS/Byte_first"), ccs = csv_col(&c, "Compute Spec"),
         ck = csv_col(&c, "kernel_details__summarize_kernel_stats"), ctk = csv_col(&c, "trunc_kernel_details");
    if (cn < 0 || cd < 0) {
        csv_free(&c);
        return;
    }
    size_t blen = strlen(sheet);
    int bwd_sheet = blen > 4 && !strcmp(sheet + blen - 4, "_bwd");
    for (size_t r = 0; r < c.nrows; r++) {
        char **row = c.rows[r];
        const char *name = row[cn];
        G.rows++;
        for (long k = 0; k < (long)c.ncols; k++)
            if (k == cd || k == ct || k == cs || k == cc || k == ck || k == ctk) roundtrip_literal(path, r, c.hdr[k], row[k]);
        const tl_pm_op *op = tl_pm_find(name);
        if (!op || (op->flags & TL_PM_PENDING)) {
            G.rows_unmodelled++;
            continue;
        }
        G.rows_modelled++;
        int aside = 0;
        for (const char **s = SET_ASIDE; *s; s++)
            if (!strcmp(*s, name)) aside = 1;
        tl_pm_mode mode = bwd_sheet && !aside ? TL_PM_BWD : TL_PM_FWD;
        /* kernel names from the summary (GEMM transpose detection) */
        const char *kn[64];
        size_t nk = 0;
        tl_pv *kl;
        tl_err e;
        if (ck >= 0 && *row[ck] && tl_pv_parse(&A, row[ck], strlen(row[ck]), &kl, &e) == 0)
            for (size_t i = 0; i < tl_pv_len(kl) && nk < 64; i++) {
                const tl_pv *nmv = tl_pv_get(tl_pv_at(kl, (long)i), "name");
                if (nmv && nmv->kind == TL_PV_STR) kn[nk++] = nmv->u.s.p;
            }
        /* InferenceAttention rows: the step annotation in vLLM's form, from
         * the sq/sk sums the sheet lists as params */
        const char *ann = NULL;
        static const char *const sq[] = {"param: c_sq", "param: c_sk", "param: c_sqsq", "param: c_sqsk",
                                         "param: g_sq", "param: g_sk", "param: g_sqsq", "param: g_sqsk"};
        long long v[8]; /* the sheet may print them as floats ("15360.0") */
        int have = 1;
        for (int i = 0; i < 8; i++) {
            long col = csv_col(&c, sq[i]);
            if (col < 0 || !*row[col]) have = 0;
            else v[i] = (long long)strtod(row[col], NULL);
        }
        if (have)
            ann = tl_arena_printf(&A, "execute_0_context_0(sq%lldsk%lldsqsq%lldsqsk%lld)_generation_0(sq%lldsk%lldsqsq%lldsqsk%lld)",
                                  v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
        tl_pm_args a = {.input_dims = *row[cd] ? row[cd] : NULL,
                        .input_type = ct >= 0 && *row[ct] ? row[ct] : NULL,
                        .input_strides = cs >= 0 && *row[cs] ? row[cs] : NULL,
                        .concrete_inputs = cc >= 0 && *row[cc] ? row[cc] : NULL,
                        .annotation = ann,
                        .kernel_names = kn,
                        .nkernels = nk};
        tl_pm_result res;
        int rc = tl_pm_eval(op, &a, mode, NULL, &A, &res, &e);
        if (rc) {
            G.cells++;
            mismatch(path, r, name, "eval", "row", e.msg);
            continue;
        }
        if (cg >= 0) cmp_float(path, r, name, "GFLOPS_first", row[cg], res.gflops);
        if (cm >= 0) cmp_float(path, r, name, "Data Moved (MB)_first", row[cm], res.data_moved_mb);
        if (cf >= 0) cmp_float(path, r, name, "FLOPS/Byte_first", row[cf], res.flops_per_byte);
        if (ccs >= 0) {
            G.cells++;
            if (strcmp(row[ccs], res.compute_spec)) mismatch(path, r, name, "Compute Spec", row[ccs], res.compute_spec);
            else G.exact_text++;
        }
        for (size_t k = 0; k < c.ncols; k++)
            if (!strncmp(c.hdr[k], "param: ", 7)) cmp_param(path, r, name, c.hdr[k], row[k], &res);
        /* params the model emits that the sheet lacks */
        for (size_t i = 0; i < res.nparams; i++) {
            char col[256];
            snprintf(col, sizeof col, "param: %s", res.params[i].key);
            if (csv_col(&c, col) < 0) {
                G.cells++;
                mismatch(path, r, name, col, "<no column>", "present");
            }
        }
    }
    csv_free(&c);
}

static const char *SHEETS[] = {"GEMM", "SDPA_fwd", "SDPA_bwd", "CONV_fwd", "CONV_bwd", "UnaryElementwise",
                               "BinaryElementwise", "Normalization", "Reduce_fwd", "Reduce_bwd", "GroupedGEMM_fwd",
                               "MoE_comm_fwd", "MoE_comm_bwd", "SSM_fwd", "SSM_bwd", "RoPE_fwd", "CrossEntropy_fwd",
                               "RMSNorm_fwd", "InferenceAttention_fwd",
                               NULL};

static void sweep_dir(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d) return;
    const char *base = strrchr(dir, '/');
    base = base ? base + 1 : dir;
    size_t bl = strlen(base);
    int is_report = (bl > 17 && !strcmp(base + bl - 17, "_perf_report_csvs")) || !strcmp(base, "perf_csvs");
    TL_VEC(char *) names = {0};
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        tl_vec_push(&names, tl_xstrdup(de->d_name));
    }
    closedir(d);
    /* sorted for a stable report */
    for (size_t i = 1; i < names.n; i++)
        for (size_t j = i; j > 0 && strcmp(names.v[j - 1], names.v[j]) > 0; j--) {
            char *t = names.v[j];
            names.v[j] = names.v[j - 1];
            names.v[j - 1] = t;
        }
    for (size_t i = 0; i < names.n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names.v[i]);
        struct stat st;
        if (stat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            if (depth < 4 && strcmp(names.v[i], "jax")) sweep_dir(path, depth + 1);
        } else if (is_report) {
            for (const char **s = SHEETS; *s; s++) {
                char fn[128];
                snprintf(fn, sizeof fn, "%s.csv", *s);
                if (!strcmp(names.v[i], fn)) sweep_file(path, *s);
            }
        }
        free(names.v[i]);
    }
    tl_vec_free(&names);
}

/* the BERT GEMM reference row rebuilt by the sheet code, cell by cell */
static void golden_bert_sheet(const char *root)
{
    char path[8300];
    snprintf(path, sizeof path, "%s/kineto/mi300/gaunernst_bert-small-uncased__1016001_perf_report_csvs/GEMM.csv", root);
    csv c;
    if (csv_read(path, &c) != 0) return;
    tl_pm_sheet_opts o = {0};
    tl_table *g = NULL, *b = NULL;
    tl_err e;
    family_sheets("GEMM", addmm_inst, 17, &o, &g, &b, &e);
    CHECK(g != NULL);
    if (g && c.nrows) {
        CHECK_EQ_I(g->ncols, c.ncols);
        size_t n = 0, bad = 0;
        for (size_t k = 0; k < c.ncols && k < g->ncols; k++) {
            CHECK_EQ_S(g->cols[k].name, c.hdr[k]);
            char buf[64];
            const char *ours = tl_table_cell_text(g, k, 0, buf, sizeof buf);
            const char *ref = c.rows[0][k];
            n++;
            int ok;
            if (g->cols[k].type == TL_F64) ok = is_missing_text(ref) ? !*ours : fabs(strtod(ref, NULL) - strtod(ours, NULL)) <= 1e-6;
            else ok = !strcmp(ours, ref);
            if (!ok) {
                bad++;
                fprintf(stderr, "BERT GEMM row 0 [%s]: ref '%s' ours '%s'\n", c.hdr[k], ref, ours);
            }
        }
        CHECK_EQ_I(bad, 0);
        printf("BERT GEMM row 1 rebuilt: %zu cells compared, %zu mismatches\n", n, bad);
    }
    if (g) tl_table_free(g);
    csv_free(&c);
}

int main(void)
{
    tl_arena_init(&A, 1 << 20);
    find_repo_root();
    make_addmm();
    test_pyval();
    test_registry();
    test_examples();
    test_failures();
    test_arch();
    test_kdetails();
    test_sheets();

    const char *root = tl_test_data("kineto");
    if (!root) {
        printf("shared data absent: golden sweep skipped\n");
        int rc = tl_test_done("test_perfmodel");
        tl_arena_free(&A);
        return rc ? rc : 77;
    }
    char base[4096];
    snprintf(base, sizeof base, "%s", root);
    char *slash = strrchr(base, '/');
    if (slash) *slash = 0; /* .../shared/data */
    golden_bert_sheet(base);
    const char *sub[] = {"kineto", "inference", "compare"};
    for (size_t i = 0; i < 3; i++) {
        char p[4200];
        snprintf(p, sizeof p, "%s/%s", base, sub[i]);
        sweep_dir(p, 0);
    }
    printf("golden sweep: %zu files, %zu rows (%zu modelled, %zu with no model of ours), %zu cells compared "
           "(%zu floats, %zu of them not bit-identical but within 1e-6), %zu mismatches, %zu cells text-identical\n",
           G.files, G.rows, G.rows_modelled, G.rows_unmodelled, G.cells, G.float_cells, G.float_inexact, G.mismatches,
           G.exact_text);
    printf("literal round trips: %zu cells, %zu differ\n", G.literal_roundtrips, G.literal_mismatch);
    CHECK(G.files > 0 && G.rows_modelled > 0);
    CHECK_EQ_I(G.mismatches, 0);
    CHECK_EQ_I(G.literal_mismatch, 0);
    int rc = tl_test_done("test_perfmodel");
    tl_arena_free(&A);
    return rc;
}
