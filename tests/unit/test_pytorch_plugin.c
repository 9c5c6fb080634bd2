/* test_pytorch_plugin.c — the report's plugin interface end to end: builds
 * examples/plugin/example_plugin.c into a shared object with the system C
 * compiler, loads it through query/pytorch/plugin.h, and checks what it registered
 * (a category, a perf model with its sheet and unified columns, an extra
 * table) on a small synthetic trace. Skipped (77) without a C compiler. */
#include "tests/unit/tl_test.h"
#include "query/pytorch/pytorch_internal.h"
#include "query/pytorch/plugin.h"
#include "ingest/ingest.h"

#include <stdlib.h>
#include <unistd.h>

static const char *SYNTH =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::gelu\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":20,"
    "\"args\":{\"Input Dims\":[[4,1024]],\"Input type\":[\"c10::BFloat16\"],\"Input Strides\":[[1024,1]],\"Concrete Inputs\":[\"\"]}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":105,\"dur\":5,\"args\":{\"correlation\":1}},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::gelu\",\"pid\":1,\"tid\":1,\"ts\":130,\"dur\":20,"
    "\"args\":{\"Input Dims\":[[4,1024]],\"Input type\":[\"c10::BFloat16\"],\"Input Strides\":[[1024,1]],\"Concrete Inputs\":[\"\"]}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"hipLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":135,\"dur\":5,\"args\":{\"correlation\":2}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gelu_kernel\",\"pid\":2,\"tid\":0,\"ts\":200,\"dur\":4,\"args\":{\"correlation\":1,\"stream\":0}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gelu_kernel\",\"pid\":2,\"tid\":0,\"ts\":210,\"dur\":2,\"args\":{\"correlation\":2,\"stream\":7}}\n"
    "]}\n";

static const char *text(const tl_pyt_sheets *sh, const char *sheet, const char *col, size_t row)
{
    static char buf[512];
    tl_table *t = tl_pyt_sheet(sh, sheet);
    if (!t) return "(no sheet)";
    long c = tl_table_col(t, col);
    if (c < 0 || row >= t->nrows) return "(no cell)";
    return tl_table_cell_text(t, (size_t)c, row, buf, sizeof buf);
}

int main(void)
{
    char dir[] = "/tmp/tl_test_plugin_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char src[4096], so[600], cmd[8192];
    snprintf(src, sizeof src, "%s", __FILE__);
    char *p = strstr(src, "tests/unit/");
    if (!p) { printf("source tree not found: skipped\n"); return 77; }
    *p = 0;
    snprintf(so, sizeof so, "%s/example_plugin.so", dir);
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -O1 -I'%squery/pytorch' -o '%s' '%sexamples/plugin/example_plugin.c' 2>&1",
             src, so, src);
    if (system(cmd) != 0 || access(so, R_OK) != 0) {
        printf("no C compiler / example plugin not built: skipped\n");
        return 77;
    }
    tl_err err = {0};
    tl_plugin_set *ps = tl_plugin_set_new();
    CHECK_EQ_I(tl_plugin_load(ps, so, &err), 0);
    CHECK_EQ_I(tl_plugin_nperf_models(ps), 1);
    CHECK(tl_plugin_perf_model_for(ps, "aten::gelu") != NULL);
    /* a file that is not a plugin */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/not_a_plugin.so", dir);
    FILE *f = fopen(bad, "w");
    fputs("nope", f);
    fclose(f);
    CHECK(tl_plugin_load(ps, bad, &err) != 0);

    tl_catreg *cat = tl_catreg_new();
    tl_plugin_apply_categories(ps, cat);
    CHECK_EQ_S(tl_op_category(cat, "aten::gelu", NULL), "activation");
    CHECK_EQ_S(tl_op_category(cat, "aten::tanh", NULL), "activation");

    char db[600], trace[600];
    snprintf(db, sizeof db, "%s/db", dir);
    snprintf(trace, sizeof trace, "%s/t.json", dir);
    f = fopen(trace, "w");
    fputs(SYNTH, f);
    fclose(f);
    tl_store *s;
    CHECK_EQ_I(tl_store_open(db, &s, &err), 0);
    tl_ingest_opts io = {.rank = -1};
    tl_ingest_result res;
    CHECK_EQ_I(tl_ingest_file(s, trace, &io, &res, &err), 0);
    tl_reader *r;
    tl_trace *t;
    CHECK_EQ_I(tl_reader_open(s, &r, &err), 0);
    CHECK_EQ_I(tl_trace_load(r, res.id, &t, &err), 0);
    tl_pyt_opts o;
    tl_pyt_opts_default(&o);
    o.quiet = 1;
    o.categories = cat;
    o.plugins = ps;
    tl_pyt_sheets sh;
    CHECK_EQ_I(tl_pytorch_report(t, &o, &sh, &err), 0);
    CHECK_EQ_S(text(&sh, "ops_summary_by_category", "op category", 0), "activation");
    /* the model's sheet: one group (same args), two instances */
    CHECK_EQ_S(text(&sh, "GELU", "name", 0), "aten::gelu");
    CHECK_EQ_S(text(&sh, "GELU", "param: numel", 0), "4096");
    CHECK_EQ_S(text(&sh, "GELU", "name_count", 0), "2");
    CHECK_EQ_S(text(&sh, "GELU", "GFLOPS_first", 0), "3.2768e-05");
    CHECK_EQ_S(text(&sh, "GELU", "Kernel Time (µs)_sum", 0), "6.0");
    /* unified: modelled, with the plugin's parameters */
    CHECK_EQ_S(text(&sh, "unified_perf_summary", "has_perf_model", 0), "True");
    CHECK_EQ_S(text(&sh, "unified_perf_summary", "perf_params", 0), "{'numel': 4096, 'elem_bytes': 2}");
    CHECK_EQ_S(text(&sh, "unified_perf_summary", "GFLOPS", 0), "3.2768e-05");
    /* the extra table: per stream */
    CHECK_EQ_S(text(&sh, "kernels_by_stream", "stream", 0), "0");
    CHECK_EQ_S(text(&sh, "kernels_by_stream", "busy_time_us", 0), "4.0");
    CHECK_EQ_S(text(&sh, "kernels_by_stream", "stream", 1), "7");
    /* sheet order: built-in sheets first, extension tables last */
    CHECK_EQ_S(sh.v[sh.n - 1]->name, "kernels_by_stream");
    tl_pyt_sheets_free(&sh);
    tl_trace_free(t);
    tl_reader_close(r);
    tl_store_close(s);
    tl_catreg_free(cat);
    tl_plugin_set_free(ps);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) {}
    return tl_test_done("test_pytorch_plugin");
}
