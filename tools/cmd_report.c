/* cmd_report.c — `tracelens report ID|FILE [--db DIR] [--xlsx PATH |
 * --csv-dir DIR] [flags]`: one command for every trace format. It resolves
 * (or ingests) the trace, reads its format from the catalog and hands the
 * command line to the matching report: Kineto -> the PyTorch report,
 * rocprof -> the rocprofv3 report, xplane -> the JAX report, pftrace ->
 * the pftrace HIP activity report (also for the traceEvents JSON form of
 * a .pftrace, stored as Kineto), translating the short output flags into
 * the reference tools' names. */
#include "tools/cli.h"
#include "store/store.h"
#include "query/core/trace.h"

#include <stdlib.h>
#include <string.h>


static const char *REPORT_USAGE =
    "Usage: tracelens report ID|FILE [--db DIR] [--xlsx PATH | --csv-dir DIR] [flags]\n"
    "\n"
    "The performance report of a stored trace (or of a file, ingested first). The\n"
    "trace's format picks the report: PyTorch/Kineto (TraceLens_generate_perf_report_pytorch\n"
    "flags, e.g. --enable_kernel_summary --short_kernel_study), rocprofv3\n"
    "(TraceLens_generate_perf_report_rocprof flags), JAX/XPlane\n"
    "(TraceLens_generate_perf_report_jax flags) or rocprofv3 Perfetto (.pftrace, or\n"
    "its traceEvents JSON from traceconv: TraceLens_generate_perf_report_pftrace_hip_activity\n"
    "flags). Without --xlsx/--csv-dir a PyTorch\n"
    "report prints a summary (GPU timeline, top op categories and ops). --inference:\n"
    "the inference report (TraceLens_generate_perf_report_pytorch_inference flags).\n"
    "`TraceLens_generate_perf_report_pytorch --help` lists the PyTorch flags.\n";

/* The options taking a value in any of the three reports: the positional
 * trace argument is the first word that is neither an option nor such a
 * value. */
static const tl_cli_opt VALUE_OPTS[] = {
    {"--db", TL_CLI_VALUE}, {"--xlsx", TL_CLI_VALUE}, {"--csv-dir", TL_CLI_VALUE}, {"--html", TL_CLI_VALUE},
    {"--output_xlsx_path", TL_CLI_VALUE}, {"--output_csvs_dir", TL_CLI_VALUE},
    {"--micro_idle_thresh_us", TL_CLI_VALUE}, {"--short_kernel_threshold_us", TL_CLI_VALUE},
    {"--short_kernel_histogram_bins", TL_CLI_VALUE}, {"--topk_short_kernels", TL_CLI_VALUE},
    {"--topk_ops", TL_CLI_VALUE}, {"--topk_roofline_ops", TL_CLI_VALUE}, {"--comparison_json_path", TL_CLI_VALUE},
    {"--extension_file", TL_CLI_VALUE}, {"--python_path", TL_CLI_VALUE}, {"--gpu_arch_json_path", TL_CLI_VALUE},
    {"--gpu_arch_platform", TL_CLI_VALUE}, {"--inductor_cache_dir", TL_CLI_VALUE},
    {"--profile_json_path", TL_CLI_VALUE}, {"--profile_path", TL_CLI_VALUE}, {"--topk_kernels", TL_CLI_VALUE},
    {"--phase_detection_method", TL_CLI_VALUE}, {"--decode_threshold", TL_CLI_VALUE},
    {"--capture_folder", TL_CLI_VALUE}, {"--kernel_metadata_keyword_filters", TL_CLI_VALUE},
    {"--comparison_capture_folder", TL_CLI_VALUE}, {"--plot_format", TL_CLI_VALUE}, {"--plot_dpi", TL_CLI_VALUE},
    {"--trace_path", TL_CLI_VALUE}, {"--traceconv", TL_CLI_VALUE}, {"--min_tid", TL_CLI_VALUE},
    {"--max_tid", TL_CLI_VALUE}, {"--min_event_ns", TL_CLI_VALUE}, {"--kernel_summary_baseline", TL_CLI_VALUE},
    {"--kernel_summary_group", TL_CLI_VALUE}, {"--hip_summary_group", TL_CLI_VALUE}, {"--top_xla", TL_CLI_VALUE},
    {"--kernel_summary_top", TL_CLI_VALUE}, {"--hip_summary_top", TL_CLI_VALUE},
};
#define NVALUE_OPTS (sizeof VALUE_OPTS / sizeof *VALUE_OPTS)

/* The output flags of `tracelens report`, renamed to the reference's for
 * the rocprofv3 and JAX reports. */
static const tl_cli_opt SHORT_OUTPUTS[] = {{"--xlsx", TL_CLI_VALUE}, {"--csv-dir", TL_CLI_VALUE}};
/* Flags that ask for files; without one, `report` prints a summary. */
static const tl_cli_opt OUTPUT_FLAGS[] = {{"--xlsx", TL_CLI_VALUE},           {"--csv-dir", TL_CLI_VALUE},
                                          {"--output_xlsx_path", TL_CLI_VALUE}, {"--output_csvs_dir", TL_CLI_VALUE},
                                          {"--html", TL_CLI_VALUE}};
#define NOUTPUT_FLAGS (sizeof OUTPUT_FLAGS / sizeof *OUTPUT_FLAGS)

static int takes_value(const char *a) { return tl_cli_takes_next(VALUE_OPTS, NVALUE_OPTS, a); }

static char *catalog_format(const char *cat)
{
    tl_buf b = {0};
    if (tl_args_get_str(cat, strlen(cat), "format", &b)) { tl_buf_free(&b); return tl_xstrdup("kineto"); }
    char *s = tl_xstrndup(b.p ? b.p : "", b.n);
    tl_buf_free(&b);
    return s;
}

/* A Kineto-form trace with no host op (no cpu_op, python_function or
 * user_annotation in the catalog's kinds) whose events carry rocprofv3's
 * Perfetto categories is the traceEvents JSON of a .pftrace (what
 * traceconv writes): it gets the pftrace report, as the native file does. */
static int is_pftrace_json(tl_reader *r, uint64_t id, const char *cat)
{
    size_t klen;
    const char *kinds = tl_args_get(cat, strlen(cat), "kinds", &klen);
    static const char *const HOST[] = {"cpu_op", "python_function", "user_annotation"};
    for (size_t k = 0; k < 3; k++) {
        int64_t v;
        if (!kinds || tl_args_get_i64(kinds, klen, HOST[k], &v) || v) return 0;
    }
    static const char *const PERFETTO[] = {"hip_api", "hsa_api", "kernel_dispatch", "memory_copy", "gpu_activity"};
    tl_trace *t;
    tl_err err = {0};
    if (tl_trace_load_cols(r, id, TL_TC(CAT), &t, &err)) return 0;
    int found = 0;
    for (size_t i = 0; i < t->n && !found; i++) {
        const char *c = tl_trace_str(t, t->cat[i]);
        for (size_t k = 0; c && k < sizeof PERFETTO / sizeof *PERFETTO && !found; k++) found = !strcmp(c, PERFETTO[k]);
    }
    tl_trace_free(t);
    return found;
}

int tl_cmd_report(int argc, char **argv)
{
    const char *input = NULL, *db = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(REPORT_USAGE, stdout);
            return 0;
        }
        if (!strcmp(a, "--db") && i + 1 < argc) db = argv[i + 1];
        else if (!strncmp(a, "--db=", 5)) db = a + 5;
        if (a[0] == '-' && a[1]) {
            if (takes_value(a)) i++;
            continue;
        }
        if (!input) input = a;
    }
    if (!input) {
        fprintf(stderr, "tracelens: report needs a trace id or file\n%s", REPORT_USAGE);
        return TL_EXIT_USAGE;
    }
    /* --max-input-bytes applies to the ingest below */
    int bad = tl_cli_apply_common(argc, argv, VALUE_OPTS, NVALUE_OPTS, "report");
    if (bad) return bad;
    tl_cli_report_hugepages_reexec(input, db); /* before any work: see cmd_report_pytorch.c */
    /* resolve once to learn the format; the report itself reopens the store */
    tl_store *s = tl_cli_store_for(db, &input, 1);
    if (!s) return TL_EXIT_STORE;
    tl_reader *r;
    uint64_t id;
    int code = tl_cli_open_trace(s, input, &r, &id);
    if (code) { tl_store_close(s); return code; }
    const char *cat = NULL;
    tl_err err = {0};
    char *format = NULL;
    if (tl_reader_catalog(r, id, &cat, &err) == 0) format = catalog_format(cat);
    if (format && !strcmp(format, "kineto") && is_pftrace_json(r, id, cat)) {
        free(format);
        format = tl_xstrdup("pftrace");
    }
    tl_reader_close(r);
    tl_store_close(s);
    if (!format) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        return tl_cli_exit_for(err.code, TL_EXIT_FAIL);
    }
    char hex[17];
    tl_id_format(id, hex);

    if (!strcmp(format, "kineto")) {
        free(format);
        for (int i = 1; i < argc; i++)
            if (!strcmp(argv[i], "--inference")) return tl_cmd_report_kineto_inference(argc, argv);
        return tl_cmd_report_kineto(argc, argv);
    }
    int (*fn)(int, char **) = NULL;
    const char *prog = NULL;
    if (!strcmp(format, "rocprof")) { fn = tl_cmd_report_rocprof; prog = "TraceLens_generate_perf_report_rocprof"; }
    else if (!strcmp(format, "xplane")) { fn = tl_cmd_report_jax; prog = "TraceLens_generate_perf_report_jax"; }
    else if (!strcmp(format, "pftrace")) {
        fn = tl_cmd_report_pftrace_hip_activity;
        prog = "TraceLens_generate_perf_report_pftrace_hip_activity";
    }
    if (!fn) {
        fprintf(stderr, "tracelens: no report for %s traces in this build\n", format);
        free(format);
        return TL_EXIT_USAGE;
    }
    free(format);
    /* argv for the format's reference-style command: the trace id as the
     * positional argument (already stored), output flags renamed */
    char **sub = tl_xmalloc(sizeof(char *) * ((size_t)argc + 2));
    int n = 0;
    sub[n++] = (char *)prog;
    sub[n++] = hex;
    int seen_input = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1]) {
            int k = tl_cli_match(SHORT_OUTPUTS, 2, a);
            sub[n++] = k == 0 ? (char *)"--output_xlsx_path" : k == 1 ? (char *)"--output_csvs_dir" : (char *)a;
            if (takes_value(a) && i + 1 < argc) sub[n++] = argv[++i];
            continue;
        }
        if (!seen_input && !strcmp(a, input)) { seen_input = 1; continue; }
        sub[n++] = (char *)a;
    }
    /* no output flag: the terminal summary, as for a PyTorch trace */
    int files = 0;
    for (int i = 1; i < argc; i++)
        if (tl_cli_match(OUTPUT_FLAGS, NOUTPUT_FLAGS, argv[i]) >= 0) files = 1;
    if (!files) sub[n++] = (char *)"--summary";
    sub[n] = NULL;
    code = fn(n, sub);
    free(sub);
    return code;
}
