/* example_plugin.c — a worked example of a tracelens report plugin
 * (docs/EXTENSIONS.md). Build it, then pass it to the report:
 *
 *     cc -shared -fPIC -O2 -I../../query/pytorch -o example_plugin.so example_plugin.c
 *     TraceLens_generate_perf_report_pytorch --profile_json_path trace.json.gz \
 *         --output_csvs_dir out --extension_file ./example_plugin.so
 *
 * It registers the three kinds of extension:
 *   1. a category: aten::gelu and aten::tanh are filed as "activation";
 *   2. a perf model: aten::gelu gets FLOPs/bytes (so it gets a "GELU" perf
 *      sheet, has_perf_model = True and GFLOPS/TB/s in unified_perf_summary);
 *   3. a table: "kernels_by_stream", kernel count and busy time per GPU stream.
 * It includes only query/pytorch/plugin.h and links against nothing of tracelens:
 * every service comes through the api table. */
#include "plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const tl_plugin_api *api;

/* number of elements of the first shape in an "Input Dims" JSON text such
 * as [[1,141,2048],[]]; -1 when there is none */
static long long first_numel(const char *dims)
{
    if (!dims) return -1;
    const char *p = strchr(dims, '[');
    if (!p) return -1;
    p = strchr(p + 1, '[');
    if (!p) return -1;
    long long n = 1;
    int any = 0;
    for (p++; *p && *p != ']';) {
        char *end;
        long long d = strtoll(p, &end, 10);
        if (end == p) { p++; continue; }
        n *= d;
        any = 1;
        p = end;
    }
    return any ? n : 1;
}

static int elem_bytes(const char *types)
{
    if (!types) return 0;
    if (strstr(types, "BFloat16") || strstr(types, "Half")) return 2;
    if (strstr(types, "\"float\"") || strstr(types, "Float")) return 4;
    if (strstr(types, "double")) return 8;
    return 0;
}

/* GELU (tanh approximation): ~8 FLOPs per element; reads and writes each
 * element once. Declines (returns 1) without a shape. */
static int gelu_model(void *user, const char *dims, const char *types, const char *strides,
                      const char *concrete, double *flops, double *bytes, int *has_bytes,
                      tl_plugin_params *params)
{
    (void)user; (void)strides; (void)concrete;
    long long n = first_numel(dims);
    if (n < 0) return 1;
    *flops = 8.0 * (double)n;
    int eb = elem_bytes(types);
    *has_bytes = eb > 0;
    *bytes = 2.0 * (double)n * eb;
    params->n = 2;
    params->key[0] = "numel";
    snprintf(params->val[0], sizeof params->val[0], "%lld", n);
    params->key[1] = "elem_bytes";
    snprintf(params->val[1], sizeof params->val[1], "%d", eb);
    return 0;
}

/* kernels_by_stream: a table built from the trace */
static int kernels_by_stream(void *user, const tl_plugin_trace *t, struct tl_table *out)
{
    (void)user;
    enum { MAXS = 64 };
    long long stream_of[MAXS];
    size_t count[MAXS] = {0}, ns = 0;
    int32_t *rows[MAXS] = {0};
    for (size_t i = 0; i < t->n; i++) {
        if (t->kind[i] != 5) continue; /* kernel */
        const char *s = api->event_arg(t, i, "stream");
        long long st = s ? atoll(s) : -1;
        size_t k;
        for (k = 0; k < ns; k++) if (stream_of[k] == st) break;
        if (k == ns) {
            if (ns == MAXS) continue;
            stream_of[ns++] = st;
            rows[k] = malloc(t->n * sizeof(int32_t));
        }
        rows[k][count[k]++] = (int32_t)i;
    }
    if (!ns) return 0; /* an empty table is not written */
    size_t cs = api->col_i64(out, "stream");
    size_t cn = api->col_i64(out, "kernels");
    size_t cb = api->col_f64(out, "busy_time_us");
    for (size_t k = 0; k < ns; k++) {
        size_t r = api->add_row(out);
        api->set_i64(out, cs, r, stream_of[k]);
        api->set_i64(out, cn, r, (int64_t)count[k]);
        api->set_f64(out, cb, r, api->busy_time_us(t, rows[k], count[k]));
        free(rows[k]);
    }
    return 0;
}

int tracelens_plugin_register(const tl_plugin_api *a, void *host)
{
    if (a->abi < 1) return 1;
    api = a;
    a->add_category(host, "aten::gelu", "activation");
    a->add_category(host, "aten::tanh", "activation");
    tl_plugin_perf_model m = {0};
    m.op = "aten::gelu";
    m.category = "activation";
    m.sheet = "GELU";
    m.compute_spec = "vector_bf16";
    m.eval = gelu_model;
    a->add_perf_model(host, &m);
    a->add_table(host, "kernels_by_stream", kernels_by_stream, NULL);
    a->log(host, "example plugin registered (aten::gelu model, kernels_by_stream table)");
    return 0;
}
