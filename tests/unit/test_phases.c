/* test_phases.c — prefill/decode labelling (spec/diff-compare-phases.md C3-C5:
 * the checked examples of C4 and one per single method), step-annotation
 * parsing (C8), and the phase sheets on the shared vLLM/SGLang samples
 * (annotations win where present; the graph-merged trace keeps its steps). */
#include "tests/unit/tl_test.h"
#include "query/inference/inference.h"
#include "query/inference/inference.h"
#include "ingest/ingest.h"

#include <stdlib.h>
#include <unistd.h>

static int one(const char *name, const char *dims, const char *kernel, int method, double thr)
{
    const char *k[1] = {kernel};
    tl_phase_row r = {name, dims, k, kernel ? 1 : 0};
    uint8_t out;
    tl_phase_classify(&r, 1, method, thr, &out);
    return out;
}

static void test_union_examples(void)
{
    CHECK_EQ_I(one("aten::mm", "[[1,4096],[4096,4096]]", NULL, TL_PM_UNION, 10), TL_PHASE_DECODE);
    CHECK_EQ_I(one("aten::mm", "[[512,4096],[4096,4096]]", NULL, TL_PM_UNION, 10), TL_PHASE_PREFILL);
    CHECK_EQ_I(one("aten::add", "[[1,128,768],[1,128,768]]", NULL, TL_PM_UNION, 10), TL_PHASE_DECODE);
    CHECK_EQ_I(one("vllm::unified_attention_with_output", NULL, "paged_attention_ll4mi_QKV_kernel",
                   TL_PM_UNION, 10),
               TL_PHASE_DECODE);
    CHECK_EQ_I(one("op", NULL, "fmha_fwd_sl512_kernel", TL_PM_UNION, 10), TL_PHASE_PREFILL);
    CHECK_EQ_I(one("op", NULL, "fmha_fwd_sl1_kernel", TL_PM_UNION, 10), TL_PHASE_DECODE);
    CHECK_EQ_I(one("_C::silu_and_mul", "[[4,256]]", NULL, TL_PM_UNION, 10), TL_PHASE_MIXED);
    /* threshold moves the GEMM vote */
    CHECK_EQ_I(one("aten::mm", "[[32,4096],[4096,4096]]", NULL, TL_PM_UNION, 64), TL_PHASE_DECODE);
}

static void test_single_methods(void)
{
    CHECK_EQ_I(one("x", NULL, "batch_prefill_kernel", TL_PM_KERNEL_NAMES, 10), TL_PHASE_PREFILL);
    CHECK_EQ_I(one("x", NULL, "prefill_and_decode", TL_PM_KERNEL_NAMES, 10), TL_PHASE_PREFILL);
    CHECK_EQ_I(one("x", NULL, "reshape_and_cache_kernel", TL_PM_KERNEL_NAMES, 10), TL_PHASE_DECODE);
    CHECK_EQ_I(one("aten::mm", NULL, "Cijk_gemm", TL_PM_KERNEL_NAMES, 10), TL_PHASE_MIXED);
    CHECK_EQ_I(one("vllm::unified_attention_with_output", NULL, NULL, TL_PM_FRAMEWORK_APIS, 10),
               TL_PHASE_MIXED);
    CHECK_EQ_I(one("vllm::decode_attn", NULL, NULL, TL_PM_FRAMEWORK_APIS, 10), TL_PHASE_DECODE);
    CHECK_EQ_I(one("sglang::prefill_x", NULL, NULL, TL_PM_FRAMEWORK_APIS, 10), TL_PHASE_PREFILL);
    CHECK_EQ_I(one("my_attention_batch_prefill", NULL, NULL, TL_PM_ATTENTION_PATTERNS, 10),
               TL_PHASE_PREFILL);
    CHECK_EQ_I(one("aten::mm", NULL, NULL, TL_PM_ATTENTION_PATTERNS, 10), TL_PHASE_MIXED);
    /* QUIRK: "paged_attention.*decode" is a literal substring in gemm_params */
    CHECK_EQ_I(one("x", "[[512,4]]", "paged_attention_decode", TL_PM_GEMM_PARAMS, 10), TL_PHASE_DECODE);
    CHECK_EQ_I(one("x", "[[512,4],[4,4]]", NULL, TL_PM_GEMM_PARAMS, 10), TL_PHASE_PREFILL);
    CHECK_EQ_I(one("x", NULL, NULL, TL_PM_GEMM_PARAMS, 10), TL_PHASE_MIXED);
    /* operation_frequency never says Mixed, so neither does hybrid */
    CHECK_EQ_I(one("x", NULL, NULL, TL_PM_OPERATION_FREQUENCY, 10), TL_PHASE_DECODE);
    CHECK_EQ_I(one("x", NULL, NULL, TL_PM_HYBRID, 10), TL_PHASE_DECODE);
    int known;
    CHECK_EQ_I(tl_phase_method_parse("union", &known), TL_PM_UNION);
    CHECK_EQ_I(known, 1);
    CHECK_EQ_I(tl_phase_method_parse("temporal_analysis", &known), TL_PM_HYBRID);
    CHECK_EQ_I(known, 0);

    /* frequency percentiles: 4 names with counts 1,1,1,5 -> rare rows Prefill? no:
     * hi = p50 = 1, lo = p15 = 1: count 5 > hi -> Decode, count 1 -> Decode */
    tl_phase_row rows[8];
    const char *names[8] = {"a", "b", "c", "d", "d", "d", "d", "d"};
    for (int i = 0; i < 8; i++) rows[i] = (tl_phase_row){names[i], NULL, NULL, 0};
    uint8_t out[8];
    tl_phase_classify(rows, 8, TL_PM_OPERATION_FREQUENCY, 10, out);
    for (int i = 0; i < 8; i++) CHECK_EQ_I(out[i], TL_PHASE_DECODE);
    /* union refinement: counts 1,2,2,9 -> p70 = 2 + 0.1*7 = 2.7, p30 = 1.9:
     * the 9-row name -> Decode, the 1-row name -> Prefill, 2-row names stay Mixed */
    const char *n2[14] = {"a", "b", "b", "c", "c", "d", "d", "d", "d", "d", "d", "d", "d", "d"};
    tl_phase_row r2[14];
    uint8_t o2[14];
    for (int i = 0; i < 14; i++) r2[i] = (tl_phase_row){n2[i], NULL, NULL, 0};
    tl_phase_classify(r2, 14, TL_PM_UNION, 10, o2);
    CHECK_EQ_I(o2[0], TL_PHASE_PREFILL);
    CHECK_EQ_I(o2[1], TL_PHASE_MIXED);
    CHECK_EQ_I(o2[13], TL_PHASE_DECODE);
}

static void test_step_parse(void)
{
    tl_step s;
    CHECK(tl_step_parse("execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)", &s));
    CHECK_EQ_I(s.kind, TL_STEP_DECODE_ONLY);
    CHECK_EQ_I(s.bs, 32);
    CHECK_EQ_I(s.tokens, 32);
    CHECK(tl_step_parse("execute_8192_context_9(sq8155sk8430)_generation_37(sq37)", &s));
    CHECK_EQ_I(s.kind, TL_STEP_MIXED);
    CHECK_EQ_I(s.bs, 46);
    CHECK(tl_step_parse("execute_context_2(14721)_generation_0(0)", &s));
    CHECK_EQ_I(s.kind, TL_STEP_PREFILL_ONLY);
    CHECK_EQ_I(s.ctx, 2);
    CHECK(tl_step_parse("step[DECODE bs=64 foo]", &s));
    CHECK_EQ_I(s.kind, TL_STEP_DECODE_ONLY);
    CHECK_EQ_I(s.bs, 64);
    CHECK(tl_step_parse("step[EXTEND bs=15 toks=15360]", &s));
    CHECK_EQ_I(s.kind, TL_STEP_PREFILL_ONLY);
    CHECK_EQ_I(s.tokens, 15360);
    CHECK(tl_step_parse("prefill[bs=2 tok=300]", &s));
    CHECK_EQ_I(s.kind, TL_STEP_PREFILL_ONLY);
    CHECK(tl_step_parse("decode[bs=8]", &s));
    CHECK_EQ_I(s.kind, TL_STEP_DECODE_ONLY);
    CHECK(!tl_step_parse("ProfilerStep#3", &s));
    CHECK(!tl_step_parse("capture_32_FULL", &s));
    CHECK_EQ_S(tl_kernel_category("Cijk_Ailk_Bljk_BBS_BH_fp8"), "GEMM-FP8");
    CHECK_EQ_S(tl_kernel_category("rmsnorm_kernel"), "Norm-RMS");
    CHECK_EQ_S(tl_kernel_category("paged_attention_ll4mi_QKV_kernel"), "PagedAttention-Generic");
}

static tl_pyt_sheets sheets_of(tl_store *st, const char *path, int ks, uint64_t *idp)
{
    tl_pyt_sheets sh = {0};
    tl_err err = {0};
    tl_ingest_opts io = {.rank = -1};
    tl_ingest_result res;
    if (tl_ingest_file(st, path, &io, &res, &err)) {
        fprintf(stderr, "%s: %s\n", path, err.msg);
        CHECK(0);
        return sh;
    }
    if (idp) *idp = res.id;
    tl_reader *r;
    tl_trace *t;
    CHECK(tl_reader_open(st, &r, &err) == 0);
    CHECK(tl_trace_load(r, res.id, &t, &err) == 0);
    tl_phase_opts o;
    tl_phase_opts_default(&o);
    o.kernel_summary = ks;
    CHECK(tl_phase_sheets(t, NULL, &o, &sh, &err) == 0);
    tl_trace_free(t);
    tl_reader_close(r);
    return sh;
}

static const char *info(const tl_pyt_sheets *sh, const char *key)
{
    tl_table *t = tl_pyt_sheet(sh, "phase_analysis");
    if (!t) return NULL;
    for (size_t r = 0; r < t->nrows; r++)
        if (!strcmp(t->cols[0].v.s[r], key)) return t->cols[1].v.s[r];
    return NULL;
}

static void test_samples(void)
{
    /* tl_test_data returns a static buffer: copy */
    const char *p1 = tl_test_data("inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz");
    char *dec = p1 ? strdup(p1) : NULL;
    const char *p2 = tl_test_data("inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz");
    char *pre = p2 ? strdup(p2) : NULL;
    if (!dec || !pre) {
        free(dec);
        free(pre);
        return;
    }
    char dir[] = "/tmp/tl_test_phasesXXXXXX";
    if (!mkdtemp(dir)) return;
    tl_store *st;
    tl_err err = {0};
    CHECK(tl_store_open(dir, &st, &err) == 0);
    tl_pyt_sheets a = sheets_of(st, dec, 1, NULL);
    CHECK_EQ_S(info(&a, "phase source"), "annotations");
    CHECK(tl_pyt_sheet(&a, "ops_summary_decode") != NULL);
    CHECK(tl_pyt_sheet(&a, "ops_summary_prefill") == NULL);
    CHECK(tl_pyt_sheet(&a, "kernel_summary_decode") != NULL);
    tl_table *steps = tl_pyt_sheet(&a, "inference_steps");
    CHECK(steps && steps->nrows == 1); /* execute_.. and step[..] fold into one */
    tl_table *d = tl_pyt_sheet(&a, "ops_summary_decode");
    if (d) {
        CHECK_EQ_S(d->cols[0].name, "Kernel categories");
        CHECK_EQ_S(d->cols[6].name, "Cumulative Percentage (%)");
        CHECK_NEAR(d->cols[6].v.f[d->nrows - 1], 100.0, 1e-9);
    }
    tl_pyt_sheets_free(&a);
    tl_pyt_sheets b = sheets_of(st, pre, 0, NULL);
    CHECK_EQ_S(info(&b, "phase source"), "annotations");
    CHECK(tl_pyt_sheet(&b, "ops_summary_prefill") != NULL);
    CHECK(tl_pyt_sheet(&b, "ops_summary_decode") == NULL);
    tl_pyt_sheets_free(&b);
    tl_store_close(st);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) {}
    free(dec);
    free(pre);
}

int main(void)
{
    test_union_examples();
    test_single_methods();
    test_step_parse();
    test_samples();
    return tl_test_done("test_phases");
}
