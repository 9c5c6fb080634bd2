/* report.c — the reference's inference report
 * (TraceLens_generate_perf_report_pytorch_inference, TraceLens main
 * 171dd747): the PyTorch report with the launcher sheets grouped the
 * module way (query/pytorch, tl_pyt_opts.module_summaries and
 * group_by_parent_module), per-kernel call stacks in unified_perf_summary,
 * and the perf sheets named as that report names them: every family other
 * than GEMM, UnaryElementwise and BinaryElementwise gets "_fwd" (so
 * Normalization is Normalization_fwd), and no "_bwd" sheets (the inference
 * report builds backward tables from an empty event list). */
#include "query/inference/inference.h"
#include "query/perfmodel/perfmodel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The ops the reference's inference report annotates (apply_annotation's
 * name_filters, prefixes) before its InferenceAttention models read them. */
static const char *const ANNOTATED_OPS[] = {
    "vllm::unified_attention_with_output", "aiter::mha_varlen_fwd", "pseudo_mla_decode_fwd",
    "pseudo_mla_prefill_fwd", "vllm::gdn_attention_core", "aiter::fmha_v3_varlen_fwd",
    "sglang_profiler::tilelang_kernel_tilelang_sparse_fwd", "sglang_profiler::attention_paged_attention_ragged",
    "aiter::mha_batch_prefill", "aiter::pa_decode_gluon", "aiter::v4_attention_with_output",
    "pseudo_v4_paged_decode_swa", "pseudo_v4_paged_decode_csa", "pseudo_v4_paged_decode_hca", NULL,
};

void tl_inference_report_opts(tl_pyt_opts *o)
{
    o->annotated_ops = ANNOTATED_OPS;
    o->module_summaries = 1;
    o->per_kernel_call_stack = 1;
    /* the reference's --disable_coll_analysis defaults to off and only
     * turns it off: the inference report never runs the collective analysis */
    o->disable_coll_analysis = 1;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* The family sheets written under one name in both reports. */
static int keeps_name(const char *base)
{
    return !strcmp(base, "GEMM") || !strcmp(base, "UnaryElementwise") || !strcmp(base, "BinaryElementwise");
}

/* A single-sheet perf family's sheet ("Normalization", "Normalization_kl_overlap"):
 * its base name in *base_len, or 0 when the sheet is not one. */
static int single_family_sheet(const char *name, size_t *base_len)
{
    size_t n = strlen(name);
    if (ends_with(name, "_kl_overlap")) n -= strlen("_kl_overlap");
    char base[128];
    if (n >= sizeof base) return 0;
    memcpy(base, name, n);
    base[n] = 0;
    if (keeps_name(base) || !tl_pm_family_single(base)) return 0;
    *base_len = n;
    return 1;
}

void tl_inference_report_sheets(tl_pyt_sheets *s)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        tl_table *t = s->v[i];
        if (ends_with(t->name, "_bwd") || ends_with(t->name, "_bwd_kl_overlap")) {
            tl_table_free(t);
            continue;
        }
        size_t bl;
        if (single_family_sheet(t->name, &bl)) {
            char nm[160];
            snprintf(nm, sizeof nm, "%.*s_fwd%s", (int)bl, t->name, t->name + bl);
            t->name = tl_arena_strdup(&t->arena, nm);
        }
        s->v[k++] = t;
    }
    s->n = k;
}
