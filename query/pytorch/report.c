/* report.c — the PyTorch report pipeline: builds the context once
 * and produces the sheets in the reference's production order (spec
 * pytorch-report.md §9, pipeline order §12). Each sheet lives in its own
 * file; this file only sequences them. */
#include "query/pytorch/pytorch_internal.h"
#include "query/pytorch/plugin.h"

#include <stdio.h>
#include <stdlib.h>

int tl_pytorch_report(const tl_trace *t, const tl_pyt_opts *o, tl_pyt_sheets *out, tl_err *err)
{
    memset(out, 0, sizeof *out);
    out->total_time_ms = NAN;
    tl_catreg *own = NULL;
    const tl_catreg *cat = o->categories;
    if (!cat) {
        char warn[512];
        cat = own = tl_catreg_builtin(NULL, warn, sizeof warn);
        if (warn[0] && !o->quiet) fprintf(stderr, "tracelens: %s\n", warn);
    }
    if (o->fix_quirks) {
        /* QUIRK (§6): the leaf attention launchers are missing from the
         * registry and land in "other" */
        tl_catreg *fx = tl_catreg_copy(cat);
        if (!tl_catreg_get(fx, "aten::_flash_attention_forward") ||
            !strcmp(tl_catreg_get(fx, "aten::_flash_attention_forward"), "other"))
            tl_catreg_set(fx, "aten::_flash_attention_forward", "SDPA_fwd");
        if (!tl_catreg_get(fx, "aten::_flash_attention_backward"))
            tl_catreg_set(fx, "aten::_flash_attention_backward", "SDPA_bwd");
        if (!tl_catreg_get(fx, "aten::_efficient_attention_forward"))
            tl_catreg_set(fx, "aten::_efficient_attention_forward", "SDPA_fwd");
        tl_catreg_free(own);
        cat = own = fx;
    }
    /* per-stage times on stderr (profiling aid), and RSS when TRACELENS_MEM is set */
    int timing = o->timing;
    double tp = timing ? tl_now() : 0;
    char tbuf[512];
    size_t tn = 0;
#define STAGE(nm)                                                                        \
    do {                                                                                 \
        tl_mem_mark(nm);                                                                 \
        if (timing && tn < sizeof tbuf) {                                                \
            double tq = tl_now();                                                        \
            tn += (size_t)snprintf(tbuf + tn, sizeof tbuf - tn, " %s=%.2f", nm, (tq - tp) * 1e3); \
            tp = tq;                                                                     \
        }                                                                                \
    } while (0)
    /* the args the report reads are fetched while the context is built */
    pyt_args_job *args = pyt_args_start(t, o);
    pyt_ctx c;
    int rc = pyt_ctx_init(&c, t, o, cat, err);
    c.args_job = args; /* freed with the context, also on failure */
    STAGE("ctx");
    if (rc) goto done;
    rc = pyt_sheet_gpu_timeline(&c, out, err);
    STAGE("timeline");
    if (rc) goto done;
    out->total_time_ms = c.total_time_ms;
    /* The perf-model family sheets are built on a worker thread from
     * pyt_perf_launch on (they need only the instances, not the context),
     * after unified_perf_summary so that the two do not hold their memory
     * at once; the sheets after them in the reference's order are computed
     * meanwhile into `later` and appended once the perf sheets are in. */
    pyt_perf_job *perf = NULL;
    tl_pyt_sheets later = {0};
    if (!c.gpu_only) {
        if ((rc = pyt_sheets_ops(&c, out, err))) goto fail_perf;
        STAGE("ops");
        perf = pyt_perf_start(&c);
        STAGE("perf_start");
        if ((rc = pyt_sheet_unified(&c, out, err))) goto fail_perf;
        STAGE("unified");
        pyt_perf_launch(&c, perf);
    }
    /* no subtree is read from here on, but by the plugin perf sheets
     * (instances built on demand): the pre-order goes before
     * coll_analysis, beside which the perf sheets are built (at 10 GB the
     * report's peak) */
    if (!o->plugins) pyt_ctx_drop_tree(&c);
    if (o->kernel_summary && (rc = pyt_sheet_kernel_summary(&c, &later, err))) goto fail_perf;
    if (o->short_kernel_study && (rc = pyt_sheets_short_kernels(&c, &later, err))) goto fail_perf;
    STAGE("kernels");
    if (!c.gpu_only && !o->disable_coll_analysis && (rc = pyt_sheet_coll(&c, &later, err))) goto fail_perf;
    STAGE("coll");
    rc = pyt_perf_finish(&c, perf, out, err);
    perf = NULL;
    STAGE("perf_wait");
    if (rc) goto fail_perf;
    for (size_t i = 0; i < later.n; i++) pyt_sheets_push(out, later.v[i]);
    later.n = 0;
    tl_pyt_sheets_free(&later);
    pyt_args_join(&c); /* plugins read the trace through its reader */
    if (o->plugins && (rc = tl_plugin_run_tables(o->plugins, t, out, err))) goto done;
    if (timing) fprintf(stderr, "report_stages_ms:%s args_wait=%.2f\n", tbuf, pyt_args_wait_ms(&c));
#undef STAGE
    goto done;
fail_perf:
    pyt_perf_finish(&c, perf, NULL, NULL);
    tl_pyt_sheets_free(&later);
done:
    if (rc) tl_pyt_sheets_free(out);
    pyt_ctx_free(&c);
    tl_catreg_free(own);
    return rc;
}
