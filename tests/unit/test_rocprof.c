/* test_rocprof.c — the rocprofv3 reader and report: the real sample through
 * tl_read_rocprof into the store (counts per kind, names, columns, args,
 * extras, golden values), small synthetic documents for what the sample
 * lacks (memory copies, API calls, records before kernel_symbols, escaped
 * names, defaults), the category rules of spec formats.md §1.5, both unit
 * modes, and bad inputs (not rocprofiler-sdk-tool, missing kernel_symbols
 * entry, no dispatches, truncated gzip / JSON) which must fail or warn
 * clearly, never crash. Returns 77 when the shared sample is absent (after
 * the synthetic checks). */
#include "ingest/ingest.h"
#include "ingest/rocprof.h"
#include "query/rocprof/rocprof.h"
#include "query/core/trace.h"
#include "tests/unit/tl_test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static char g_dir[256];
static tl_store *g_store;
static int g_nfile;

/* Writes text to a temp file (gzip'ed when gz); returns its path. */
static const char *write_file(const char *text, size_t n, int gz)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/in%d.json%s", g_dir, g_nfile++, gz ? ".gz" : "");
    if (gz) {
        gzFile f = gzopen(path, "wb");
        gzwrite(f, text, (unsigned)n);
        gzclose(f);
    } else {
        FILE *f = fopen(path, "wb");
        fwrite(text, 1, n, f);
        fclose(f);
    }
    return path;
}

/* Ingests a file into the temp store and loads it; returns 0 or the error
 * code (message in err). */
static int load_file(const char *path, tl_reader **r, tl_trace **t, tl_err *err)
{
    tl_ingest_opts o = {.rank = -1};
    tl_ingest_result res;
    int rc = tl_ingest_file(g_store, path, &o, &res, err);
    if (rc) return rc;
    if ((rc = tl_reader_open(g_store, r, err))) return rc;
    if ((rc = tl_trace_load(*r, res.id, t, err))) {
        tl_reader_close(*r);
        return rc;
    }
    return 0;
}

static int load_text(const char *text, int gz, tl_reader **r, tl_trace **t, tl_err *err)
{
    return load_file(write_file(text, strlen(text), gz), r, t, err);
}

static void unload(tl_reader *r, tl_trace *t)
{
    tl_trace_free(t);
    tl_reader_close(r);
}

/* Parses a buffer with the reader alone; returns rc and the message. */
static int parse_text(const char *text, tl_err *err)
{
    tl_build *b = tl_build_new();
    memset(err, 0, sizeof *err);
    int rc = tl_rocprof_parse_buf(text, strlen(text), "mem.json", b, err);
    tl_build_free(b);
    return rc;
}

static const char *cell(const tl_table *t, const char *col, size_t row)
{
    static char buf[128];
    long c = tl_table_col(t, col);
    if (c < 0 || row >= t->nrows) return "(none)";
    return tl_table_cell_text(t, (size_t)c, row, buf, sizeof buf);
}

static const tl_table *sheet(const tl_rocprof_result *res, const char *name)
{
    for (size_t i = 0; i < res->nsheets; i++)
        if (!strcmp(res->sheets[i]->name, name)) return res->sheets[i];
    return NULL;
}

/* ---- categories ---------------------------------------------------------- */

static void test_categories(void)
{
    static const char *cases[][2] = {
        {"Cijk_gemm", "GEMM"}, {"vectorized_elementwise_kernel", "Elementwise"},
        {"reduce_kernel_sum", "Reduction"}, {"conv2d_fwd", "Convolution"},
        {"layer_norm_kernel", "Normalization"}, {"flash_attn_fwd", "Attention"},
        {"MemcpyDtoD", "Memory"}, {"ncclBroadcast", "COMM"}, {"unknown_xyz", "Other"},
        {"__amd_rocclr_copyBuffer.kd", "Memory"}, {"CatArrayBatchedCopy_contig", "Memory"},
        {"__amd_rocclr_fillBufferAligned.kd", "Other"}, {"ncclDevKernel_Generic_1", "COMM"},
        {"Cijk_SH_DBiasS_BiasSrcA_ScaleAlphaVec_PostGSU4_VW1.kd", "GEMM"},
        {"ncclDevKernel_AllReduce_Sum", "Reduction"},  /* first matching rule wins */
        {"cross_device_reduce_1stage", "Reduction"},
        {"RCCL_kernel", "COMM"}, {"MATMUL", "GEMM"}, {"fmha_bwd", "Attention"},
        {"CIJ\xe2\x84\xaa", "GEMM"},                    /* KELVIN SIGN lowercases to k */
        {"EL\xc4\xb0MENTWISE", "Other"},                 /* İ -> i + U+0307: no match */
        {"", "Other"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        CHECK_EQ_S(tl_rocprof_category(cases[i][0], strlen(cases[i][0])), cases[i][1]);
}

static void test_sniff(void)
{
    static const char a[] = "{\"rocprofiler-sdk-tool\":[{}]}";
    static const char b[] = "  \n{ \"x\": 1, \"rocprofiler-sdk-tool\" : []}";
    static const char c[] = "{\"traceEvents\":[{\"name\":\"rocprofiler-sdk-tool\"}]}";
    static const char d[] = "[\"rocprofiler-sdk-tool\"]";
    CHECK(tl_rocprof_sniff(a, strlen(a)));
    CHECK(tl_rocprof_sniff(b, strlen(b)));
    CHECK(!tl_rocprof_sniff(c, strlen(c)));
    CHECK(!tl_rocprof_sniff(d, strlen(d)));
    CHECK(!tl_rocprof_sniff("", 0));
}

/* ---- bad inputs ------------------------------------------------------------ */

static void test_bad_inputs(void)
{
    tl_err err;
    CHECK(parse_text("{\"traceEvents\":[]}", &err) == TL_EFORMAT);
    CHECK(strstr(err.msg, "Not a valid rocprofv3 file: missing 'rocprofiler-sdk-tool' key") != NULL);
    CHECK(parse_text("{\"rocprofiler-sdk-tool\":[]}", &err) == TL_EFORMAT);
    CHECK(strstr(err.msg, "Not a valid rocprofv3 file") && strstr(err.msg, "empty array"));
    CHECK(parse_text("{\"rocprofiler-sdk-tool\":{}}", &err) == TL_EFORMAT);
    CHECK(strstr(err.msg, "not an array") != NULL);
    CHECK(parse_text("{\"rocprofiler-sdk-tool\":[{\"metadata\":{}}]}", &err) == TL_EFORMAT);
    CHECK(strstr(err.msg, "no 'buffer_records'") != NULL);
    CHECK(parse_text("{\"rocprofiler-sdk-tool\":[{\"buffer_records\":[]}]}", &err) == TL_EFORMAT);
    CHECK(strstr(err.msg, "buffer_records") != NULL);
    CHECK(parse_text("[1,2]", &err) == TL_EFORMAT);
    CHECK(strstr(err.msg, "Not a valid rocprofv3 file") != NULL);
    /* a record without end_timestamp */
    CHECK(parse_text("{\"rocprofiler-sdk-tool\":[{\"buffer_records\":{\"kernel_dispatch\":"
                     "[{\"start_timestamp\":5}]}}]}", &err) == TL_EFORMAT);
    CHECK(strstr(err.msg, "no end_timestamp") != NULL);
    /* wrong types, trailing garbage, truncation: messages name the byte */
    CHECK(parse_text("{\"rocprofiler-sdk-tool\":[{\"buffer_records\":{\"kernel_dispatch\":"
                     "[{\"start_timestamp\":\"x\",\"end_timestamp\":1}]}}]}", &err) == TL_EFORMAT);
    CHECK(strstr(err.msg, "byte ") != NULL);
    CHECK(parse_text("{\"rocprofiler-sdk-tool\":[{\"buffer_records\":{}}]} x", &err) == TL_EFORMAT);
    CHECK(parse_text("{\"rocprofiler-sdk-tool\":[{\"buffer_records\":{\"kernel_dispatch\":[{", &err) ==
          TL_EFORMAT);
    CHECK(strstr(err.msg, "byte ") != NULL);
    /* no dispatches: a valid (empty) trace */
    CHECK_EQ_I(parse_text("{\"rocprofiler-sdk-tool\":[{\"buffer_records\":{\"kernel_dispatch\":[]}}]}", &err), 0);
    CHECK_EQ_I(parse_text("{\"rocprofiler-sdk-tool\":[{\"buffer_records\":{}},{\"ignored\":1}]}", &err), 0);
}

/* A document with two kernels (one id missing from kernel_symbols), a
 * memory copy and an API call, records before the tables they need. */
static const char SYNTH[] =
    "{\"rocprofiler-sdk-tool\":[{\n"
    " \"buffer_records\":{\n"
    "  \"kernel_dispatch\":[\n"
    "   {\"kind\":11,\"thread_id\":7,\"correlation_id\":{\"internal\":3,\"external\":9},\n"
    "    \"start_timestamp\":1000,\"end_timestamp\":3500,\"dispatch_info\":{\"agent_id\":{\"handle\":2},\n"
    "    \"queue_id\":{\"handle\":4},\"kernel_id\":1,\"dispatch_id\":11,\"workgroup_size\":{\"x\":64,\"y\":2},\n"
    "    \"grid_size\":{\"x\":128,\"y\":1,\"z\":3}},\"stream_id\":{\"handle\":5}},\n"
    "   {\"start_timestamp\":3000,\"end_timestamp\":4000,\"dispatch_info\":{\"kernel_id\":42}},\n"
    "   {\"start_timestamp\":10000,\"end_timestamp\":10500,\"dispatch_info\":{\"kernel_id\":2}}],\n"
    "  \"memory_copy\":[{\"kind\":2,\"operation\":1,\"start_timestamp\":5000,\"end_timestamp\":6000,\n"
    "    \"dst_agent_id\":{\"handle\":2},\"src_agent_id\":{\"handle\":1},\"bytes\":4096}],\n"
    "  \"hip_api\":[{\"kind\":1,\"operation\":0,\"thread_id\":7,\"correlation_id\":{\"internal\":3},\n"
    "    \"start_timestamp\":900,\"end_timestamp\":950}],\n"
    "  \"marker_api\":[{\"whatever\":[1,2,{\"a\":null}]}]},\n"
    " \"kernel_symbols\":[{\"kernel_id\":1,\"truncated_kernel_name\":\"\",\"formatted_kernel_name\":\"my\\u005fgemm\\\"k\\\"\",\n"
    "   \"kernel_name\":\"_Z7my_gemmv.kd\"},{\"kernel_id\":2,\"kernel_name\":\"\"}],\n"
    " \"strings\":{\"buffer_records\":[{\"kind\":\"NONE\",\"operations\":[]},\n"
    "   {\"kind\":\"HIP_RUNTIME_API\",\"operations\":[\"hipLaunchKernel\"]},\n"
    "   {\"kind\":\"MEMORY_COPY\",\"operations\":[\"MEMORY_COPY_NONE\",\"MEMORY_COPY_HOST_TO_DEVICE\"]}]},\n"
    " \"metadata\":{\"pid\":77,\"init_time\":0,\"fini_time\":20000,\"node\":{\"hostname\":\"h\\u00e9\"}}\n"
    "}]}\n";

static void check_synth(const tl_trace *t)
{
    CHECK_EQ_S(t->format, "rocprof");
    CHECK_EQ_I(t->n, 5);
    int nk = 0, nm = 0, na = 0;
    for (size_t i = 0; i < t->n; i++) {
        nk += t->kind[i] == TL_K_KERNEL;
        nm += t->kind[i] == TL_K_MEMCPY;
        na += t->kind[i] == TL_K_RUNTIME;
    }
    CHECK_EQ_I(nk, 3);
    CHECK_EQ_I(nm, 1);
    CHECK_EQ_I(na, 1);
    /* file order: the dispatches, then the copy, then the API call */
    CHECK_EQ_S(tl_trace_str(t, t->name[0]), "my_gemm\"k\"");
    CHECK_EQ_S(tl_trace_str(t, t->name[1]), "unknown_kernel_42");
    CHECK_EQ_S(tl_trace_str(t, t->name[2]), "");  /* kernel_name present but empty */
    CHECK_EQ_S(tl_trace_str(t, t->name[3]), "MEMORY_COPY_HOST_TO_DEVICE");
    CHECK_EQ_S(tl_trace_str(t, t->name[4]), "hipLaunchKernel");
    CHECK_EQ_S(tl_trace_str(t, t->cat[0]), "kernel");
    CHECK_EQ_S(tl_trace_str(t, t->cat[3]), "gpu_memcpy");
    CHECK_EQ_S(tl_trace_str(t, t->cat[4]), "hip_api");
    CHECK_EQ_I(t->ts[0], 1000);
    CHECK_EQ_I(t->dur[0], 2500);
    CHECK_EQ_I(t->pid[0], 2);
    CHECK_EQ_I(t->tid[0], 5);
    CHECK_EQ_I(t->device[0], 2);
    CHECK_EQ_I(t->stream[0], 5);
    CHECK_EQ_I(t->corr[0], 3);
    CHECK_EQ_I(t->ext_id[0], 9);
    CHECK(t->device[1] == TL_NONE);
    CHECK(t->stream[1] == TL_NONE);
    CHECK(t->corr[1] == TL_NONE);
    CHECK_EQ_S(tl_trace_str(t, t->grid[0]), "[128, 1, 3]");
    CHECK_EQ_S(tl_trace_str(t, t->block[0]), "[64, 2, 1]");
    CHECK_EQ_S(tl_trace_str(t, t->grid[1]), "[1, 1, 1]");
    size_t al;
    const char *a = tl_trace_args(t, 0, &al);
    int64_t v = -1;
    CHECK(tl_args_get_i64(a, al, "dispatch_id", &v) == 0 && v == 11);
    CHECK(tl_args_get_i64(a, al, "thread_id", &v) == 0 && v == 7);
    CHECK(tl_args_get_i64(a, al, "queue_id", &v) == 0 && v == 4);
    CHECK(tl_args_get_i64(a, al, "kernel_id", &v) == 0 && v == 1);
    a = tl_trace_args(t, 3, &al);
    CHECK(tl_args_get_i64(a, al, "bytes", &v) == 0 && v == 4096);
    CHECK(tl_args_get_i64(a, al, "src_agent_id", &v) == 0 && v == 1);
    CHECK_EQ_I(t->device[3], 2);
    CHECK_EQ_I(t->pid[4], 77);
    CHECK_EQ_I(t->tid[4], 7);
    CHECK_EQ_I(t->corr[4], 3);
    size_t wl;
    const char *w = tl_trace_extra(t, TL_ROCPROF_X_WARNINGS, &wl);
    CHECK(w && strstr(w, "1 kernel dispatches name kernel ids absent from kernel_symbols (first: 42)"));
    CHECK(tl_trace_extra(t, TL_ROCPROF_X_METADATA, NULL) != NULL);

    /* the report: both unit modes */
    tl_rocprof_opts o;
    tl_rocprof_opts_default(&o);
    o.kernel_details = 1;
    o.short_kernel_study = 1;
    o.short_threshold = 1.0; /* µs, strict: the 500 ns kernel, not the 1000 ns one */
    o.hist_bins = 2;
    tl_rocprof_result res;
    tl_err err = {0};
    CHECK_EQ_I(tl_rocprof_report(t, &o, &res, &err), 0);
    CHECK_EQ_I(res.nsheets, 6);
    CHECK_EQ_I(res.n_kernels, 3);
    CHECK_EQ_I(res.n_memcpy, 1);
    CHECK_EQ_I(res.n_api, 1);
    CHECK_EQ_I(res.pid, 77);
    CHECK_EQ_S(res.hostname, "h\xc3\xa9");
    const tl_table *g = sheet(&res, "gpu_timeline");
    /* kernels [1000,3500] [3000,4000] [10000,10500] -> 3500 ns; copy 1000 ns */
    CHECK_EQ_S(cell(g, "time ms", 0), "0.02");
    CHECK_EQ_S(cell(g, "time ms", 1), "0.0035");
    CHECK_EQ_S(cell(g, "percent", 1), "17.5");
    CHECK_EQ_S(cell(g, "time ms", 2), "0.001");
    CHECK_EQ_S(cell(g, "time ms", 3), "0.0045");
    CHECK_EQ_S(cell(g, "time ms", 4), "0.0155");
    CHECK_EQ_S(cell(g, "percent", 4), "77.5");
    const tl_table *k = sheet(&res, "kernel_summary");
    CHECK_EQ_I(k->nrows, 3);
    CHECK_EQ_S(cell(k, "name", 0), "my_gemm\"k\"");
    CHECK_EQ_S(cell(k, "Mean Kernel Time (µs)", 0), "2.5");
    CHECK_EQ_S(cell(k, "Min Kernel Time (µs)", 0), "2.5");
    CHECK_EQ_S(cell(k, "Total Kernel Time (ms)", 0), "0.0025");
    CHECK_EQ_S(cell(k, "Std Kernel Time (µs)", 0), "");
    CHECK_EQ_S(cell(k, "Category", 0), "GEMM");
    CHECK_EQ_S(cell(k, "Percentage (%)", 0), "62.5");
    CHECK_EQ_S(cell(k, "Cumulative Percentage (%)", 0), "62.5");
    CHECK_EQ_S(cell(k, "Cumulative Percentage (%)", 1), "87.5");
    CHECK_EQ_S(cell(k, "Cumulative Percentage (%)", 2), "100.0");
    const tl_table *d = sheet(&res, "kernel_details");
    CHECK_EQ_S(cell(d, "Kernel duration (µs)", 0), "2.5");
    CHECK_EQ_S(cell(d, "grid_z", 0), "3");
    CHECK_EQ_S(cell(d, "block_y", 0), "2");
    CHECK_EQ_S(cell(d, "agent_id", 1), "0");
    CHECK_EQ_S(cell(d, "stream", 0), "5");
    CHECK_EQ_S(cell(d, "thread_id", 0), "7");
    CHECK_EQ_S(cell(d, "dispatch_id", 1), "0");
    const tl_table *s = sheet(&res, "short_kernels_summary");
    CHECK_EQ_I(s->nrows, 1);
    CHECK_EQ_S(cell(s, "Short Kernel duration (µs) sum", 0), "0.5");
    CHECK_EQ_S(cell(s, "Short Kernel duration (µs) percent of total time", 0), "12.5");
    const tl_table *h = sheet(&res, "short_kernel_histogram");
    CHECK_EQ_I(h->nrows, 2);
    CHECK_EQ_S(cell(h, "bin_start", 0), "0.0");  /* min == max: [v-0.5, v+0.5] */
    CHECK_EQ_S(cell(h, "bin_end", 1), "1.0");
    CHECK_EQ_S(cell(h, "count", 1), "1");
    tl_rocprof_result_free(&res);

    o.reference_units = 1;
    o.short_threshold = 1000; /* ns under the reference's rule */
    CHECK_EQ_I(tl_rocprof_report(t, &o, &res, &err), 0);
    k = sheet(&res, "kernel_summary");
    CHECK_EQ_S(cell(k, "Mean Kernel Time (µs)", 0), "2500.0");
    CHECK_EQ_S(cell(k, "Min Kernel Time (µs)", 0), "2500");
    CHECK_EQ_S(cell(k, "Total Kernel Time (ms)", 0), "2.5");
    /* cumulative in name order: "" < "my_gemm..." < "unknown_kernel_42" */
    CHECK_EQ_S(cell(k, "Cumulative Percentage (%)", 0), "75.0");
    d = sheet(&res, "kernel_details");
    CHECK_EQ_S(cell(d, "Kernel duration (µs)", 0), "2500");
    s = sheet(&res, "short_kernels_summary");
    CHECK_EQ_S(cell(s, "Short Kernel duration (µs) sum", 0), "500");
    h = sheet(&res, "short_kernel_histogram");
    CHECK_EQ_S(cell(h, "bin_start", 0), "499.5");
    tl_rocprof_result_free(&res);

    o.hist_bins = 0;
    CHECK(tl_rocprof_report(t, &o, &res, &err) == TL_EUSAGE);
}

static void test_synthetic(void)
{
    tl_reader *r;
    tl_trace *t;
    tl_err err = {0};
    /* plain (one window) and gzip (streamed) give the same trace */
    for (int gz = 0; gz < 2; gz++) {
        if (load_text(SYNTH, gz, &r, &t, &err)) {
            fprintf(stderr, "synthetic (gz=%d): %s\n", gz, err.msg);
            CHECK(0);
            continue;
        }
        check_synth(t);
        unload(r, t);
    }
}

/* One kernel per category, each lasting the category's total on the real
 * sample (ns): the reference's percentages are those of
 *   d = pd.DataFrame({"op category": cats, "ms": pd.Series(ns, dtype="int64") / 1000.0})
 *   d["Percentage (%)"] = d["ms"] / d["ms"].sum() * 100.0
 *   d["Cumulative Percentage (%)"] = d["Percentage (%)"].cumsum()
 * (pandas 1.5, cats ascending), which differ in the last digit from
 * part / total * 100 over the integer ns total (93.62896945325032, a
 * final cumulative 100.0). */
static void test_category_percentages(void)
{
    static const struct {
        const char *name;
        int64_t ns;
    } K[] = {{"attn_k", 3909163},       {"nccl_k", 4158756678},   {"elementwise_k", 103507352},
             {"gemm_k", 65590500},      {"copy_k", 16590646},     {"norm_k", 11158277},
             {"other_k", 63265169},     {"reduce_k", 18963593}};
    enum { NK = sizeof K / sizeof *K };
    char doc[4096];
    size_t n = 0;
    int64_t ts = 0;
    n += (size_t)snprintf(doc + n, sizeof doc - n,
                          "{\"rocprofiler-sdk-tool\":[{\"buffer_records\":{\"kernel_dispatch\":[");
    for (int i = 0; i < NK; i++, ts += K[i - 1].ns)
        n += (size_t)snprintf(doc + n, sizeof doc - n,
                              "%s{\"start_timestamp\":%lld,\"end_timestamp\":%lld,\"dispatch_info\":{\"kernel_id\":%d}}",
                              i ? "," : "", (long long)ts, (long long)(ts + K[i].ns), i + 1);
    n += (size_t)snprintf(doc + n, sizeof doc - n, "]},\"kernel_symbols\":[");
    for (int i = 0; i < NK; i++)
        n += (size_t)snprintf(doc + n, sizeof doc - n, "%s{\"kernel_id\":%d,\"kernel_name\":\"%s\"}",
                              i ? "," : "", i + 1, K[i].name);
    n += (size_t)snprintf(doc + n, sizeof doc - n,
                          "],\"metadata\":{\"init_time\":0,\"fini_time\":%lld}}]}\n", (long long)ts);
    CHECK(n < sizeof doc);
    tl_reader *r;
    tl_trace *t;
    tl_err err = {0};
    if (load_text(doc, 0, &r, &t, &err)) {
        fprintf(stderr, "category percentages: %s\n", err.msg);
        CHECK(0);
        return;
    }
    /* rows by time descending; cumulative in category-name order with
     * --reference-units, down the printed rows by default */
    static const char *cat[NK] = {"COMM", "Elementwise", "GEMM", "Other",
                                  "Reduction", "Memory", "Normalization", "Attention"};
    static const char *pct[NK] = {"93.62896945325033", "2.330332704931296",   "1.4766843545837802",
                                  "1.424332567252861", "0.42694050342343015", "0.3735167041055942",
                                  "0.2512140183412543", "0.08800969411146117"};
    static const char *cum_ref[NK] = {"93.7169791473618",   "96.04731185229309",  "97.52399620687687",
                                      "99.57305949657659",  "100.00000000000001", "97.89751291098247",
                                      "98.14872692932373",  "0.08800969411146117"};
    static const char *cum_def[NK] = {"93.62896945325033", "95.95930215818163", "97.43598651276541",
                                      "98.86031908001827", "99.2872595834417",  "99.6607762875473",
                                      "99.91199030588855", "100.00000000000001"};
    tl_rocprof_opts o;
    tl_rocprof_opts_default(&o);
    for (int ref = 0; ref < 2; ref++) {
        o.reference_units = ref;
        tl_rocprof_result res;
        CHECK_EQ_I(tl_rocprof_report(t, &o, &res, &err), 0);
        const tl_table *c = sheet(&res, "kernel_summary_by_category");
        CHECK_EQ_I(c->nrows, NK);
        for (size_t i = 0; i < NK && i < c->nrows; i++) {
            CHECK_EQ_S(cell(c, "op category", i), cat[i]);
            CHECK_EQ_S(cell(c, "Percentage (%)", i), pct[i]);
            CHECK_EQ_S(cell(c, "Cumulative Percentage (%)", i), ref ? cum_ref[i] : cum_def[i]);
        }
        tl_rocprof_result_free(&res);
    }
    unload(r, t);
}

/* A dispatch without kernel_id, repeated keys (read once). */
static void test_odd(void)
{
    tl_reader *r;
    tl_trace *t;
    tl_err err = {0};
    if (load_text("{\"rocprofiler-sdk-tool\":[{\"kernel_symbols\":[],\"strings\":{},\"metadata\":{},"
                  "\"buffer_records\":{\"kernel_dispatch\":[{\"start_timestamp\":1,\"end_timestamp\":2}],"
                  "\"kernel_dispatch\":[{\"start_timestamp\":1,\"end_timestamp\":2}]},"
                  "\"buffer_records\":{\"kernel_dispatch\":[{\"start_timestamp\":1,\"end_timestamp\":2}]}}]}",
                  0, &r, &t, &err)) {
        fprintf(stderr, "odd: %s\n", err.msg);
        CHECK(0);
        return;
    }
    CHECK_EQ_I(t->n, 1);
    if (t->n) CHECK_EQ_S(tl_trace_str(t, t->name[0]), "unknown_kernel_None");
    const char *w = tl_trace_extra(t, TL_ROCPROF_X_WARNINGS, NULL);
    CHECK(w && strstr(w, "(first: none)"));
    unload(r, t);
}

/* No dispatches: the report has the reference's empty sheets. */
static void test_empty(void)
{
    tl_reader *r;
    tl_trace *t;
    tl_err err = {0};
    if (load_text("{\"rocprofiler-sdk-tool\":[{\"metadata\":{\"init_time\":1,\"fini_time\":2},"
                  "\"buffer_records\":{\"kernel_dispatch\":[]}}]}", 0, &r, &t, &err)) {
        fprintf(stderr, "empty: %s\n", err.msg);
        CHECK(0);
        return;
    }
    tl_rocprof_opts o;
    tl_rocprof_opts_default(&o);
    o.kernel_details = o.short_kernel_study = 1;
    tl_rocprof_result res;
    CHECK_EQ_I(tl_rocprof_report(t, &o, &res, &err), 0);
    CHECK_EQ_I(res.n_kernels, 0);
    const tl_table *g = sheet(&res, "gpu_timeline");
    CHECK(g && g->nrows == 0 && g->ncols == 3);
    const tl_table *k = sheet(&res, "kernel_summary");
    CHECK(k && k->nrows == 0 && k->ncols == 11);
    CHECK(k && !strcmp(k->cols[7].name, "Total Kernel Time (ms)"));
    const tl_table *d = sheet(&res, "kernel_details");
    CHECK(d && d->ncols == 0);
    CHECK(sheet(&res, "short_kernel_histogram")->nrows == 0);
    tl_rocprof_result_free(&res);
    unload(r, t);
}

static void test_truncated(void)
{
    tl_reader *r;
    tl_trace *t;
    tl_err err = {0};
    size_t n = strlen(SYNTH);
    /* truncated JSON, plain and gzip'ed (a complete gzip of a cut text) */
    for (int gz = 0; gz < 2; gz++) {
        const char *p = write_file(SYNTH, n / 2, gz);
        int rc = load_file(p, &r, &t, &err);
        CHECK(rc == TL_EFORMAT);
        CHECK(strstr(err.msg, "truncated") != NULL || strstr(err.msg, "end of input") != NULL);
        if (!rc) unload(r, t);
    }
    /* a cut gzip stream */
    const char *p = write_file(SYNTH, n, 1);
    FILE *f = fopen(p, "rb");
    char buf[8192];
    size_t m = fread(buf, 1, sizeof buf, f);
    fclose(f);
    f = fopen(p, "wb");
    fwrite(buf, 1, m * 2 / 3, f);
    fclose(f);
    int rc = load_file(p, &r, &t, &err);
    CHECK(rc < 0);
    CHECK(err.msg[0] != 0);
    if (!rc) unload(r, t);
    /* a non-rocprof JSON fed to the rocprof reader directly */
    const char *k = "{\"traceEvents\":[{\"ph\":\"X\"}]}";
    tl_source *src;
    p = write_file(k, strlen(k), 1);
    CHECK_EQ_I(tl_source_open(p, &src, NULL, &err), 0);
    tl_build *b = tl_build_new();
    CHECK(tl_read_rocprof(src, p, b, &err) == TL_EFORMAT);
    CHECK(strstr(err.msg, "Not a valid rocprofv3 file: missing 'rocprofiler-sdk-tool' key") != NULL);
    tl_build_free(b);
    tl_source_close(src);
}

/* ---- the real sample --------------------------------------------------------- */

static void test_sample(const char *path)
{
    /* reader alone, streaming from gzip */
    tl_err err = {0};
    tl_source *src;
    CHECK_EQ_I(tl_source_open(path, &src, NULL, &err), 0);
    tl_build *b = tl_build_new();
    int rc = tl_read_rocprof(src, path, b, &err);
    if (rc) fprintf(stderr, "sample: %s\n", err.msg);
    CHECK_EQ_I(rc, 0);
    CHECK_EQ_I(tl_build_nevents(b), 43915);
    tl_build_free(b);
    tl_source_close(src);

    tl_reader *r;
    tl_trace *t;
    if (load_file(path, &r, &t, &err)) {
        fprintf(stderr, "sample: %s\n", err.msg);
        CHECK(0);
        return;
    }
    CHECK_EQ_S(t->format, "rocprof");
    size_t nk = 0, other = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (t->kind[i] == TL_K_KERNEL) nk++;
        else other++;
    }
    CHECK_EQ_I(nk, 43915);
    CHECK_EQ_I(other, 0);
    /* first dispatch (spec §1.2 example record) */
    CHECK_EQ_S(tl_trace_str(t, t->name[0]), "__amd_rocclr_copyBuffer.kd");
    CHECK_EQ_I(t->ts[0], 63857982592000LL);
    CHECK_EQ_I(t->dur[0], 2840);
    CHECK_EQ_I(t->device[0], 37946);
    CHECK_EQ_I(t->stream[0], 0);
    CHECK_EQ_I(t->corr[0], 1);
    CHECK_EQ_S(tl_trace_str(t, t->grid[0]), "[512, 1, 1]");
    CHECK(tl_trace_extra(t, TL_ROCPROF_X_WARNINGS, NULL) == NULL);
    size_t al;
    const char *ag = tl_trace_extra(t, TL_ROCPROF_X_AGENTS, &al);
    CHECK(ag && al == 819718 && ag[0] == '[');

    /* golden values of spec formats.md §1.9, reference units */
    tl_rocprof_opts o;
    tl_rocprof_opts_default(&o);
    o.reference_units = 1;
    o.kernel_details = 1;
    o.has_topk = 1;
    o.topk = 20;
    o.short_kernel_study = 1;
    tl_rocprof_result res;
    CHECK_EQ_I(tl_rocprof_report(t, &o, &res, &err), 0);
    const tl_table *g = sheet(&res, "gpu_timeline");
    CHECK_EQ_S(cell(g, "time ms", 0), "19207.53247000122");
    CHECK_EQ_S(cell(g, "time ms", 1), "4233.1123342971805");
    CHECK_EQ_S(cell(g, "percent", 1), "22.038813891938254");
    CHECK_EQ_S(cell(g, "time ms", 4), "14974.42013570404");
    CHECK_EQ_S(cell(g, "percent", 4), "77.96118610806174");
    const tl_table *k = sheet(&res, "kernel_summary");
    CHECK_EQ_I(k->nrows, 44);
    CHECK_EQ_S(cell(k, "name", 0), "ncclDevKernel_Generic_1");
    CHECK_EQ_S(cell(k, "Count", 0), "1310");
    CHECK_EQ_S(cell(k, "Total Kernel Time (ms)", 0), "4158756.678");
    CHECK_EQ_S(cell(k, "Percentage (%)", 0), "93.62896945325032");
    CHECK_EQ_S(cell(k, "Cumulative Percentage (%)", 0), "97.7109114568534");
    CHECK_EQ_S(cell(k, "Category", 0), "COMM");
    const tl_table *d = sheet(&res, "kernel_details");
    CHECK_EQ_I(d->nrows, 20);
    CHECK_EQ_S(cell(d, "Kernel duration (µs)", 0), "733003332");
    CHECK_EQ_S(cell(d, "dispatch_id", 0), "2809");
    CHECK_EQ_S(cell(d, "grid_x", 0), "26624");
    CHECK_EQ_S(cell(d, "thread_id", 0), "908");
    CHECK_EQ_I(sheet(&res, "short_kernels_summary")->nrows, 0);
    tl_rocprof_result_free(&res);

    /* default units: the same values, scaled */
    o.reference_units = 0;
    CHECK_EQ_I(tl_rocprof_report(t, &o, &res, &err), 0);
    k = sheet(&res, "kernel_summary");
    CHECK_EQ_S(cell(k, "Total Kernel Time (ms)", 0), "4158.756678");
    CHECK_EQ_S(cell(k, "Max Kernel Time (µs)", 0), "733003.332");
    CHECK_EQ_S(cell(k, "Percentage (%)", 0), "93.62896945325032");
    CHECK_EQ_S(cell(k, "Cumulative Percentage (%)", 0), "93.62896945325032");
    g = sheet(&res, "gpu_timeline");
    CHECK_EQ_S(cell(g, "time ms", 0), "19207.53247");
    CHECK_EQ_S(cell(g, "time ms", 1), "4233.112334");
    d = sheet(&res, "kernel_details");
    CHECK_EQ_S(cell(d, "Kernel duration (µs)", 0), "733003.332");
    /* 10 µs threshold: now there are short kernels */
    CHECK(sheet(&res, "short_kernels_summary")->nrows > 0);
    CHECK_EQ_I(sheet(&res, "short_kernel_histogram")->nrows, 100);
    tl_rocprof_result_free(&res);
    unload(r, t);
}

int main(void)
{
    g_store = tl_test_store_open("tl_test_rocprof_", g_dir, sizeof g_dir);
    test_categories();
    test_sniff();
    test_bad_inputs();
    test_synthetic();
    test_category_percentages();
    test_odd();
    test_empty();
    test_truncated();
    const char *sample = tl_test_data("rocprof/908_results.json.gz");
    if (sample) test_sample(sample);
    tl_test_store_close(g_store, g_dir);
    int rc = tl_test_done("test_rocprof");
    if (!sample && !rc) {
        printf("test_rocprof: shared sample absent; skipped\n");
        return 77;
    }
    return rc;
}
