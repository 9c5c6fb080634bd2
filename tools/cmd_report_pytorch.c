/* cmd_report_pytorch.c — the PyTorch report commands: the reference tool's
 * TraceLens_generate_perf_report_pytorch (same flags, defaults and output
 * naming, spec pytorch-report.md §10, §12) and the Kineto branch of
 * `tracelens report`. Parses flags, opens (or ingests) the trace, runs
 * query/pytorch_report and hands the tables to report/ for CSV, xlsx (with
 * native charts) or the terminal. */
#include "tools/cli.h"
#include "query/inference/inference.h"
#include "query/core/trace.h"
#include "query/pytorch/pytorch.h"
#include "query/diff/diff.h"
#include "query/perfmodel/perfmodel.h"
#include "query/pytorch/plugin.h"
#include "report/report.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TL_DATADIR
#define TL_DATADIR "data"
#endif

static const char *PYT_USAGE =
    "Usage: TraceLens_generate_perf_report_pytorch --profile_json_path PATH [options]\n"
    "       tracelens report ID|FILE [--db DIR] [--xlsx PATH | --csv-dir DIR] [options]\n"
    "\n"
    "The PyTorch performance report of a Kineto trace (.json or .json.gz), computed\n"
    "from the trace store: a file not yet stored is ingested first (default store, or\n"
    "--db DIR / $TRACELENS_DB); a stored trace is reported without reading the file.\n"
    "\n"
    "Output:\n"
    "  --output_xlsx_path PATH       Excel workbook (default when no CSV folder is given:\n"
    "                                the trace path cut at its last '.json' + _perf_report.xlsx)\n"
    "  --output_csvs_dir DIR         one CSV per sheet (alone: no workbook)\n"
    "  --xlsx PATH, --csv-dir DIR    the same, for `tracelens report` (no flag: terminal summary)\n"
    "  --html PATH                   one self-contained page: GPU time with idle, categories, top\n"
    "                                ops and kernels, roofline, short kernels, every sheet\n"
    "Sheets and options (defaults as the reference tool):\n"
    "  --include_unlinked_kernels    GPU events without a host launch count in gpu_timeline\n"
    "  --micro_idle_thresh_us N      split idle time into gaps < N us and >= N us\n"
    "  --disable_coll_analysis       no coll_analysis sheet\n"
    "  --enable_kernel_summary       kernel_summary sheet\n"
    "  --short_kernel_study          short_kernel_histogram and short_kernels_summary\n"
    "  --short_kernel_threshold_us N (10)   --short_kernel_histogram_bins N (100)\n"
    "  --topk_short_kernels N        keep the top N short-kernel groups\n"
    "  --group_by_num_kernels        num_kernels as an extra grouping key\n"
    "  --include_overlap_info        ops_unique_args_kl_overlap, unified_perf_summary_kl_overlap and\n"
    "                                each perf sheet's _kl_overlap twin (GEMM_kl_overlap, ...)\n"
    "  --detect_recompute            split by activation-checkpoint recompute\n"
    "  --include_first_occurrence_time, --include_call_stack\n"
    "  --gpu_arch_json_path PATH | --gpu_arch_platform NAME   roofline columns and charts\n"
    "                                (default: picked from the trace's deviceProperties GPU\n"
    "                                name when a shipped table fits; --no_auto_arch disables)\n"
    "  --extension_file PATH         op categories (TSV: op<TAB>category) or a plugin (.so);\n"
    "                                repeatable; see docs/EXTENSIONS.md\n"
    "  --topk_ops N, --topk_roofline_ops N   accepted; no effect (as in the reference)\n"
    "  --inductor_cache_dir DIR      accepted; no effect: Inductor Triton kernels are modelled\n"
    "                                from their trace args, and the reference reads the cache\n"
    "                                only for kernels it leaves unmodelled (docs/CONFORMANCE.md)\n"
    "  --fix_quirks                  correct the reference's known quirks instead of reproducing\n"
    "                                them (docs/CONFORMANCE.md, PyTorch report)\n"
    "Inference (LLM serving traces; docs/CONFORMANCE.md, Inference):\n"
    "  --inference_phase_analysis    ops_summary_prefill/decode (and kernel_summary_prefill/\n"
    "                                decode with --enable_kernel_summary); phases come from step\n"
    "                                annotations where the engine writes them, else heuristics\n"
    "  --phase_detection_method M    kernel_names, operation_frequency, framework_apis,\n"
    "                                attention_patterns, gemm_params, hybrid, union (default);\n"
    "                                any other name is refused (exit 2), as the branch's choices\n"
    "  --decode_threshold N          (10)   --no_phase_annotations: heuristics only\n"
    "  --generate_plots, --disable_plots, --plot_format png|pdf|svg, --plot_dpi N\n"
    "                                the branch's phase plots: accepted, not drawn (a note says\n"
    "                                so; the phase sheets hold their data)\n"
    "  --capture_folder DIR          graph-capture traces: kernels replayed by CUDA/HIP graph\n"
    "                                launches are attributed to the ops that captured them (a\n"
    "                                warning when no launch matches a capture window)\n"
    "  TraceLens_generate_perf_report_pytorch_inference --help: the reference's inference report\n"
    "Comparison:\n"
    "  --comparison_json_path PATH   a second trace (file or stored id): TraceDiff against it;\n"
    "                                adds the diff_stats sheet and the LCA speedup/delta columns\n"
    "                                after Kernel Time (µs)_sum in unified_perf_summary\n"
    "Linking:\n"
    "  --reference_linking           link GPU events to runtime calls only as the reference does:\n"
    "                                in a trace without ac2g flows (older Kineto writes\n"
    "                                async_cpu_to_gpu flows) only graph launches keep their GPU\n"
    "                                events (default: the others are linked by correlation id)\n"
    "Not supported: --enable_pseudo_ops, --enable-origami, --python_path.\n";

typedef struct pyt_cli {
    tl_pyt_opts o;
    const tl_cli_report_variant *variant; /* NULL: the PyTorch report */
    const char *usage;
    const char *comparison_capture; /* --comparison_capture_folder (inference) */
    int plots_asked, plots_disabled; /* the branches' phase plot flags */
    int pseudo_ops;                  /* --enable_pseudo_ops (inference) */
    const char *input, *db, *xlsx, *csv_dir;
    const char *html;          /* --html PATH: the page (report/html.c) */
    const char *arch_json, *arch_platform;
    const char *ext[16];
    int next;
    int tracelens_style;
    int phase, no_phase_annotations, no_auto_arch;
    const char *phase_method, *capture_folder;
    const char *comparison;   /* --comparison_json_path */
    int reference_linking;    /* --reference_linking */
    double decode_threshold;
} pyt_cli;

static int parse_num(const char *flag, const char *v, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end) {
        fprintf(stderr, "tracelens: %s expects an integer, got '%s'\n", flag, v);
        return -1;
    }
    *out = x;
    return 0;
}

enum {
    P_HELP, P_PATH, P_XLSX, P_CSV, P_DB, P_UNLINKED, P_MICRO_IDLE, P_NO_COLL, P_KERNEL_SUMMARY, P_SHORT_STUDY,
    P_SHORT_THRESH, P_SHORT_BINS, P_TOPK_SHORT, P_TOPK_OPS, P_TOPK_ROOFLINE, P_GROUP_NUM_KERNELS, P_OVERLAP,
    P_RECOMPUTE, P_FIRST_OCCURRENCE, P_CALL_STACK, P_FIX_QUIRKS, P_PHASE, P_NO_AUTO_ARCH, P_NO_PHASE_ANNOT,
    P_PHASE_METHOD, P_DECODE_THRESH, P_CAPTURE, P_COMPARISON, P_ARCH_JSON, P_ARCH_PLATFORM, P_EXTENSION,
    P_PSEUDO_OPS, P_ORIGAMI, P_PYTHON_PATH, P_INDUCTOR_CACHE,
    P_HTML, P_GROUP_PARENT, P_COMP_CAPTURE, P_INFERENCE, P_GEN_PLOTS, P_DISABLE_PLOTS, P_PLOT_FORMAT, P_PLOT_DPI,
    P_REFLINK
};
static const tl_cli_opt OPTS[] = {
    [P_HELP] = {"-h|--help", TL_CLI_FLAG},
    [P_PATH] = {"--profile_json_path", TL_CLI_VALUE},
    [P_XLSX] = {"--output_xlsx_path|--xlsx", TL_CLI_VALUE},
    [P_CSV] = {"--output_csvs_dir|--csv-dir", TL_CLI_VALUE},
    [P_DB] = {"--db", TL_CLI_VALUE},
    [P_UNLINKED] = {"--include_unlinked_kernels", TL_CLI_FLAG},
    [P_MICRO_IDLE] = {"--micro_idle_thresh_us", TL_CLI_VALUE},
    [P_NO_COLL] = {"--disable_coll_analysis", TL_CLI_FLAG},
    [P_KERNEL_SUMMARY] = {"--enable_kernel_summary|--kernel_summary", TL_CLI_FLAG},
    [P_SHORT_STUDY] = {"--short_kernel_study", TL_CLI_FLAG},
    [P_SHORT_THRESH] = {"--short_kernel_threshold_us", TL_CLI_VALUE},
    [P_SHORT_BINS] = {"--short_kernel_histogram_bins", TL_CLI_VALUE},
    [P_TOPK_SHORT] = {"--topk_short_kernels", TL_CLI_VALUE},
    [P_TOPK_OPS] = {"--topk_ops", TL_CLI_VALUE},
    [P_TOPK_ROOFLINE] = {"--topk_roofline_ops", TL_CLI_VALUE},
    [P_GROUP_NUM_KERNELS] = {"--group_by_num_kernels", TL_CLI_FLAG},
    [P_OVERLAP] = {"--include_overlap_info", TL_CLI_FLAG},
    [P_RECOMPUTE] = {"--detect_recompute", TL_CLI_FLAG},
    [P_FIRST_OCCURRENCE] = {"--include_first_occurrence_time", TL_CLI_FLAG},
    [P_CALL_STACK] = {"--include_call_stack", TL_CLI_FLAG},
    [P_FIX_QUIRKS] = {"--fix_quirks", TL_CLI_FLAG},
    [P_PHASE] = {"--inference_phase_analysis", TL_CLI_FLAG},
    [P_NO_AUTO_ARCH] = {"--no_auto_arch", TL_CLI_FLAG},
    [P_NO_PHASE_ANNOT] = {"--no_phase_annotations", TL_CLI_FLAG},
    [P_PHASE_METHOD] = {"--phase_detection_method", TL_CLI_VALUE},
    [P_DECODE_THRESH] = {"--decode_threshold", TL_CLI_VALUE},
    [P_CAPTURE] = {"--capture_folder", TL_CLI_VALUE},
    [P_COMPARISON] = {"--comparison_json_path", TL_CLI_VALUE},
    [P_REFLINK] = {"--reference_linking", TL_CLI_FLAG},
    [P_ARCH_JSON] = {"--gpu_arch_json_path", TL_CLI_VALUE},
    [P_ARCH_PLATFORM] = {"--gpu_arch_platform", TL_CLI_VALUE},
    [P_EXTENSION] = {"--extension_file", TL_CLI_VALUE},
    [P_PSEUDO_OPS] = {"--enable_pseudo_ops", TL_CLI_FLAG},
    [P_ORIGAMI] = {"--enable-origami", TL_CLI_FLAG},
    [P_PYTHON_PATH] = {"--python_path", TL_CLI_VALUE},
    [P_INDUCTOR_CACHE] = {"--inductor_cache_dir", TL_CLI_VALUE},
    [P_HTML] = {"--html", TL_CLI_VALUE},
    /* the inference report's own (refused by the PyTorch report, as there) */
    [P_GROUP_PARENT] = {"--group_by_parent_module", TL_CLI_FLAG},
    [P_COMP_CAPTURE] = {"--comparison_capture_folder", TL_CLI_VALUE},
    /* `tracelens report --inference`: the inference report */
    [P_INFERENCE] = {"--inference", TL_CLI_FLAG},
    /* the phase plots of the inference branches (matplotlib figures) */
    [P_GEN_PLOTS] = {"--generate_plots", TL_CLI_FLAG},
    [P_DISABLE_PLOTS] = {"--disable_plots", TL_CLI_FLAG},
    [P_PLOT_FORMAT] = {"--plot_format", TL_CLI_VALUE},
    [P_PLOT_DPI] = {"--plot_dpi", TL_CLI_VALUE},
};

/* One option of the command line into c; 0, or an exit code. */
static int take_option(pyt_cli *c, const tl_cli_args *p, int k)
{
    const char *v = p->val;
    long x = 0;
    int inference = c->variant && c->variant->inference;
    if ((k == P_GROUP_PARENT || k == P_COMP_CAPTURE) && !inference) {
        fprintf(stderr, "tracelens: %s belongs to the inference report "
                "(TraceLens_generate_perf_report_pytorch_inference, tracelens report --inference)\n",
                p->name);
        return TL_EXIT_USAGE;
    }
    if (k == P_INFERENCE && !c->tracelens_style) {
        fprintf(stderr, "tracelens: unknown option '%s' (see --help)\n", p->arg);
        return TL_EXIT_USAGE;
    }
    switch (k) {
    case P_MICRO_IDLE: case P_SHORT_THRESH: case P_SHORT_BINS: case P_TOPK_SHORT: case P_TOPK_OPS:
    case P_TOPK_ROOFLINE: case P_DECODE_THRESH: case P_PLOT_DPI:
        if (parse_num(p->name, v, &x)) return TL_EXIT_USAGE;
        break;
    case P_PLOT_FORMAT:
        if (strcmp(v, "png") && strcmp(v, "pdf") && strcmp(v, "svg")) {
            fprintf(stderr, "tracelens: argument --plot_format: invalid choice: '%s' (choose from 'png', 'pdf', "
                            "'svg')\n", v);
            return TL_EXIT_USAGE;
        }
        break;
    case P_PHASE_METHOD: {
        int known;
        tl_phase_method_parse(v, &known);
        if (!known) {
            fprintf(stderr, "tracelens: argument --phase_detection_method: invalid choice: '%s' (choose from "
                            "'union', 'gemm_params', 'kernel_names', 'attention_patterns', 'framework_apis', "
                            "'operation_frequency', 'hybrid')\n", v);
            return TL_EXIT_USAGE;
        }
        break;
    }
    }
    switch (k) {
    case P_PATH: c->input = v; break;
    case P_XLSX: c->xlsx = v; break;
    case P_CSV: c->csv_dir = v; break;
    case P_HTML: c->html = v; break;
    case P_DB: c->db = v; break;
    case P_UNLINKED: c->o.include_unlinked_kernels = 1; break;
    case P_MICRO_IDLE: c->o.has_micro_idle = 1; c->o.micro_idle_thresh_us = (double)x; break;
    case P_NO_COLL: c->o.disable_coll_analysis = 1; break;
    case P_KERNEL_SUMMARY: c->o.kernel_summary = 1; break;
    case P_SHORT_STUDY: c->o.short_kernel_study = 1; break;
    case P_SHORT_THRESH: c->o.short_kernel_threshold_us = (double)x; break;
    case P_SHORT_BINS: c->o.short_kernel_bins = (int)x; break;
    case P_TOPK_SHORT: c->o.topk_short_kernels = x; break;
    case P_TOPK_OPS: case P_TOPK_ROOFLINE: break;
    case P_GROUP_NUM_KERNELS: c->o.group_by_num_kernels = 1; break;
    case P_OVERLAP: c->o.include_overlap_info = 1; break;
    case P_RECOMPUTE: c->o.detect_recompute = 1; break;
    case P_FIRST_OCCURRENCE: c->o.include_first_occurrence_time = 1; break;
    case P_CALL_STACK: c->o.include_call_stack = 1; break;
    case P_FIX_QUIRKS: c->o.fix_quirks = 1; break;
    case P_PHASE: c->phase = 1; break;
    case P_NO_AUTO_ARCH: c->no_auto_arch = 1; break;
    case P_NO_PHASE_ANNOT: c->no_phase_annotations = 1; break;
    case P_PHASE_METHOD: c->phase_method = v; break;
    case P_DECODE_THRESH: c->decode_threshold = (double)x; break;
    case P_CAPTURE: c->capture_folder = v; break;
    case P_COMPARISON: c->comparison = v; break;
    case P_REFLINK: c->reference_linking = 1; break;
    case P_ARCH_JSON: c->arch_json = v; break;
    case P_ARCH_PLATFORM: c->arch_platform = v; break;
    case P_EXTENSION:
        if (c->next == (int)(sizeof c->ext / sizeof c->ext[0])) {
            fprintf(stderr, "tracelens: too many --extension_file\n");
            return TL_EXIT_USAGE;
        }
        c->ext[c->next++] = v;
        break;
    case P_GROUP_PARENT: c->o.group_by_parent_module = 1; break;
    case P_COMP_CAPTURE: c->comparison_capture = v; break;
    case P_INFERENCE: break; /* picked by tools/cmd_report.c */
    case P_GEN_PLOTS: case P_PLOT_FORMAT: case P_PLOT_DPI: c->plots_asked = 1; break;
    case P_DISABLE_PLOTS: c->plots_disabled = 1; break;
    case P_PSEUDO_OPS:
        if (!inference) goto unsupported;
        fprintf(stderr, "tracelens: note: --enable_pseudo_ops: pseudo ops are built for vLLM's unfused Triton "
                        "MoE only; the reference's MLA, V4 paged-decode, AITER, GPTQ/AWQ and flydsl MoE pseudo "
                        "ops are not (docs/CONFORMANCE.md)\n");
        c->pseudo_ops = 1;
        break;
    case P_INDUCTOR_CACHE: /* the Triton model reads the trace args; the reference
                              consults the cache only for kernels it never models */
        break;
    unsupported:
    case P_ORIGAMI: case P_PYTHON_PATH:
        fprintf(stderr, "tracelens: %s is not supported (outside the PyTorch report this tool "
                "reproduces; see docs/CONFORMANCE.md)\n", p->name);
        return TL_EXIT_USAGE;
    }
    return 0;
}

/* Returns 0, or an exit code. */
static int parse_args(pyt_cli *c, int argc, char **argv)
{
    tl_pyt_opts_default(&c->o);
    c->usage = c->variant ? c->variant->usage : PYT_USAGE;
    c->o.timing = tl_env.timing;
    c->o.serial = tl_env.report_serial;
    tl_cli_args p;
    tl_cli_args_init(&p, argc, argv, OPTS, sizeof OPTS / sizeof *OPTS);
    for (int k; (k = tl_cli_next(&p)) != TL_CLI_END;) {
        if (k == P_HELP) {
            fputs(c->usage, stdout);
            exit(0);
        } else if (k >= 0) {
            int rc = take_option(c, &p, k);
            if (rc) return rc;
        } else if (k == TL_CLI_BAD) {
            fprintf(stderr, "tracelens: %s\n%s", p.msg, c->usage);
            return TL_EXIT_USAGE;
        } else if (k == TL_CLI_UNKNOWN) {
            fprintf(stderr, "tracelens: unknown option '%s'%s (see --help)\n", p.arg, tl_cli_hint(&p));
            return TL_EXIT_USAGE;
        } else if (c->tracelens_style && !c->input) c->input = p.arg;
        else {
            fprintf(stderr, "tracelens: unexpected argument '%s'\n", p.arg);
            return TL_EXIT_USAGE;
        }
    }
    if (!c->input) {
        fprintf(stderr, "tracelens: %s\n%s", c->tracelens_style ? "report needs a trace id or file"
                : "--profile_json_path is required", c->usage);
        return TL_EXIT_USAGE;
    }
    if (c->variant && c->variant->inference) {
        if (c->comparison_capture && !c->comparison) {
            fprintf(stderr, "tracelens: --comparison_capture_folder requires --comparison_json_path.\n");
            return TL_EXIT_USAGE;
        }
        c->variant->adjust(&c->o);
    }
    if (c->arch_json && c->arch_platform) {
        fprintf(stderr, "tracelens: --gpu_arch_json_path and --gpu_arch_platform are mutually exclusive\n");
        return TL_EXIT_USAGE;
    }
    return 0;
}

/* §10: <input cut at its last ".json">_perf_report.xlsx */
static char *default_xlsx(const char *input)
{
    const char *p = NULL, *q = input;
    while ((q = strstr(q, ".json"))) p = q++;
    size_t n = p ? (size_t)(p - input) : strlen(input);
    char *out = tl_xmalloc(n + 32);
    memcpy(out, input, n);
    strcpy(out + n, "_perf_report.xlsx");
    return out;
}

static size_t col_or0(const tl_table *t, const char *name)
{
    long c = tl_table_col(t, name);
    return c < 0 ? 0 : (size_t)c;
}

/* 1 if s is a number as Python would print an int (isint) or float. */
static int numeric_text(const char *s, int *isint)
{
    char *end;
    errno = 0;
    if (!*s) return 0;
    (void)strtoll(s, &end, 10);
    if (!*end && !errno) { *isint = 1; return 1; }
    (void)strtod(s, &end);
    *isint = 0;
    return !*end && strcmp(s, "nan") && strcmp(s, "inf") && strcmp(s, "-inf");
}

/* Some text columns hold numbers: the perf sheets' "param: ..." columns are
 * text in the reference (grouping keys, §9.6.3), coll_analysis' process
 * group names are strings in the trace. They stay text in the CSVs; in the
 * workbook a text column whose every value is a number is written as
 * numbers, so Excel does not flag "number stored as text" ("nan" cells, a
 * parameter the op lacks, stay empty). Returns a converted copy, or NULL
 * when nothing changes. */
static tl_table *xlsx_numeric_params(const tl_table *t)
{
    int any = 0;
    int *conv = tl_xcalloc(t->ncols ? t->ncols : 1, sizeof *conv); /* 0 no, 1 int, 2 float */
    for (size_t c = 0; c < t->ncols; c++) {
        if (t->cols[c].type != TL_STR) continue;
        int ok = 1, allint = 1, seen = 0;
        for (size_t r = 0; r < t->nrows && ok; r++) {
            const char *v = t->cols[c].v.s[r];
            if (!v || !strcmp(v, "nan")) continue;
            int isint;
            if (!numeric_text(v, &isint)) ok = 0;
            if (!isint) allint = 0;
            seen = 1;
        }
        if (ok && seen) { conv[c] = allint ? 1 : 2; any = 1; }
    }
    if (!any) { free(conv); return NULL; }
    tl_table *o = tl_table_new(t->name);
    for (size_t c = 0; c < t->ncols; c++) {
        tl_type ty = conv[c] == 1 ? TL_I64 : conv[c] == 2 ? TL_F64 : t->cols[c].type;
        size_t k = tl_table_add_col(o, t->cols[c].name, ty);
        o->cols[k].hidden = t->cols[c].hidden;
        o->cols[k].as_float = t->cols[c].as_float;
    }
    tl_table_set_nrows(o, t->nrows);
    for (size_t c = 0; c < t->ncols; c++)
        for (size_t r = 0; r < t->nrows; r++) {
            if (tl_table_is_missing(t, c, r)) continue;
            const tl_column *src = &t->cols[c];
            if (conv[c]) {
                const char *v = src->v.s[r];
                if (!strcmp(v, "nan")) continue;
                if (conv[c] == 1) tl_table_set_i64(o, c, r, strtoll(v, NULL, 10));
                else tl_table_set_f64(o, c, r, strtod(v, NULL));
                continue;
            }
            switch (src->type) {
            case TL_STR: tl_table_set_str_ref(o, c, r, src->v.s[r]); break;
            case TL_I64: tl_table_set_i64(o, c, r, src->v.i[r]); break;
            case TL_F64: tl_table_set_f64(o, c, r, src->v.f[r]); break;
            case TL_BOOL: tl_table_set_bool(o, c, r, src->v.b[r]); break;
            }
        }
    free(conv);
    return o;
}

/* The roofline chart of a perf sheet (tl_pyt_roofline_of), its points the
 * sheet's top 50 groups. */
static int add_roofline(tl_xlsx *x, const tl_table *t, const tl_pm_arch *arch, int anchor_row, tl_err *err)
{
    tl_pyt_roofline g;
    if (tl_pyt_roofline_of(t, arch, &g)) return 0;
    tl_xy_series roofs[2] = {{"memory roof", g.mem_x, g.mem_y, 2}, {"compute roof", g.compute_x, g.compute_y, 2}};
    char title[160];
    snprintf(title, sizeof title, "%s roofline on %s (%s)", t->name, arch->name ? arch->name : "GPU", g.spec);
    tl_scatter_spec sp = {0};
    sp.sheet = t->name;
    sp.x_col = g.x_col;
    sp.y_col = g.y_col;
    sp.nrows = t->nrows > 50 ? 50 : t->nrows;
    sp.series_name = "top ops by kernel time";
    sp.lines = roofs;
    sp.nlines = 2;
    sp.title = title;
    sp.x_title = "FLOPS/Byte";
    sp.y_title = "TFLOPS/s";
    sp.anchor_row = anchor_row;
    sp.anchor_col = -1;
    return tl_report_xlsx_add_scatter(x, &sp, err);
}

/* The workbook: every sheet in order, plus native charts for the GPU
 * timeline breakdown, the time per op category and the perf sheets'
 * rooflines. */
/* The row whose first column reads name, or -1. */
static long row_of(const tl_table *t, const char *name)
{
    if (!t->ncols || t->cols[0].type != TL_STR) return -1;
    for (size_t r = 0; r < t->nrows; r++)
        if (!tl_table_is_missing(t, 0, r) && !strcmp(t->cols[0].v.s[r], name)) return (long)r;
    return -1;
}

static int write_xlsx(const char *path, const tl_pyt_sheets *s, const tl_pm_arch *arch)
{
    tl_err err = {0};
    tl_xlsx *x;
    tl_xlsx_opts xo = {.charts = 1};
    if (tl_report_xlsx_open(path, &xo, &x, &err)) goto fail0;
    for (size_t i = 0; i < s->n; i++) {
        tl_table *conv = xlsx_numeric_params(s->v[i]);
        int rc = tl_report_xlsx_add_table(x, conv ? conv : s->v[i], NULL, &err);
        /* the sheet is written when added */
        tl_table_free(conv);
        if (rc) goto fail;
    }
    const tl_table *tl = tl_pyt_sheet(s, "gpu_timeline");
    if (tl && tl->nrows) {
        /* the breakdown rows: computation, exposed comm, exposed memcpy, idle
         * (rows 0-2 and the idle row(s) after busy_time) */
        tl_chart_spec c = {0};
        c.kind = TL_CHART_PIE;
        c.sheet = "gpu_timeline";
        c.label_col = 0;
        c.value_col = col_or0(tl, "time ms");
        c.first_row = 0;
        c.nrows = 3;
        long idle = row_of(tl, "idle_time");
        if (idle > 3) c.also_row = (size_t)idle + 1;
        c.title = idle > 3 ? "GPU time: computation, exposed comm, exposed memcpy and idle"
                           : "GPU time breakdown (busy: computation, exposed comm, exposed memcpy)";
        c.anchor_row = 1;
        c.anchor_col = -1;
        if (tl_report_xlsx_add_chart(x, &c, &err)) goto fail;
        tl_chart_spec b = c;
        b.kind = TL_CHART_BAR;
        b.nrows = tl->nrows;
        b.also_row = 0;
        b.title = "GPU timeline (ms)";
        b.x_title = "ms";
        b.anchor_row = 18;
        if (tl_report_xlsx_add_chart(x, &b, &err)) goto fail;
    }
    const tl_table *cat = tl_pyt_sheet(s, "ops_summary_by_category");
    if (cat && cat->nrows) {
        tl_chart_spec c = {0};
        c.kind = TL_CHART_BAR;
        c.sheet = "ops_summary_by_category";
        c.label_col = 0;
        c.value_col = col_or0(cat, "total_direct_kernel_time_ms");
        c.nrows = cat->nrows > 30 ? 30 : cat->nrows;
        c.title = "GPU kernel time by op category (ms)";
        c.x_title = "ms";
        c.anchor_row = 1;
        c.anchor_col = -1;
        c.y_scale = c.nrows > 12 ? (double)c.nrows / 12.0 : 1;
        if (tl_report_xlsx_add_chart(x, &c, &err)) goto fail;
    }
    if (arch)
        for (size_t i = 0; i < s->n; i++) {
            if (tl_pyt_has_roofline(s->v[i]->name) && add_roofline(x, s->v[i], arch, 1, &err)) goto fail;
        }
    if (tl_report_xlsx_close(x, &err)) goto fail0;
    return 0;
fail:
    tl_report_xlsx_discard(x);
fail0:
    fprintf(stderr, "tracelens: %s\n", err.msg);
    return TL_EXIT_FAIL;
}

/* A copy of t with only the named columns (terminal views). */
static tl_table *project(const tl_table *t, const char *const *cols)
{
    tl_table *o = tl_table_new(t->name);
    size_t nc = 0;
    long src[16];
    for (size_t i = 0; cols[i] && nc < 16; i++) {
        long c = tl_table_col(t, cols[i]);
        if (c < 0) continue;
        src[nc++] = c;
        tl_table_add_col(o, cols[i], t->cols[c].type);
    }
    tl_table_set_nrows(o, t->nrows);
    for (size_t k = 0; k < nc; k++)
        for (size_t r = 0; r < t->nrows; r++) {
            size_t c = (size_t)src[k];
            if (tl_table_is_missing(t, c, r)) continue;
            switch (t->cols[c].type) {
            case TL_STR: tl_table_set_str(o, k, r, t->cols[c].v.s[r]); break;
            case TL_I64: tl_table_set_i64(o, k, r, t->cols[c].v.i[r]); break;
            case TL_F64: tl_table_set_f64(o, k, r, t->cols[c].v.f[r]); break;
            case TL_BOOL: tl_table_set_bool(o, k, r, t->cols[c].v.b[r]); break;
            }
        }
    return o;
}

static void print_summary(const tl_pyt_sheets *s, uint64_t id, const char *source)
{
    tl_cli_summary_head("PyTorch report", id, source);
    const tl_table *t = tl_pyt_sheet(s, "gpu_timeline");
    tl_term_opts to;
    if (t) {
        to = tl_cli_term_opts(t, 15);
        tl_report_term_print(stdout, t, &to);
    }
    t = tl_pyt_sheet(s, "ops_summary_by_category");
    if (t) {
        putchar('\n');
        to = tl_cli_term_opts(t, 15);
        tl_report_term_print(stdout, t, &to);
    }
    t = tl_pyt_sheet(s, "ops_summary");
    if (t) {
        static const char *const cols[] = {"name", "is_recompute", "Count", "total_direct_kernel_time_ms",
                                           "Categories", "Percentage (%)", NULL};
        tl_table *v = project(t, cols);
        putchar('\n');
        to = tl_cli_term_opts(v, 10);
        tl_report_term_print(stdout, v, &to);
        tl_table_free(v);
    }
    tl_cli_summary_foot(s->n);
}

/* Memory a stage frees goes back to the system before the next stage
 * allocates. glibc otherwise raises its mmap threshold each time a large
 * block (a decoded column, a per-event array) is freed, so later ones come
 * from the brk heap, where a free block below a live one is never returned:
 * the peak then carries the earlier stages' garbage. The cost is fresh
 * pages where freed ones would have been reused: the ingest recycles its
 * chunk buffers itself for that reason (store.c, payload pool). Setting the
 * trim threshold also fixes the mmap threshold at its 128 KiB default. Not
 * with GLIBC_TUNABLES set: that is the huge-page re-exec of a large trace,
 * where reusing freed memory beats returning it, or the user's own
 * settings. */
static void return_freed_memory(void)
{
    if (tl_env.glibc_tunables) return;
    mallopt(M_TRIM_THRESHOLD, 0);
}

/* What one report run holds, released by run_free. */
typedef struct pyt_run {
    tl_pm_arch *arch;
    tl_catreg *cats;
    tl_plugin_set *plugins;
    tl_store *s;
    tl_reader *r;
    tl_trace *t;
    tl_reader *cmp_r; /* --comparison_json_path */
    tl_trace *cmp_t;
    tl_table *graph_launches;
    tl_pyt_sheets sheets;
    char *xlsx_default;
    const char *xlsx;
    double t_load, t_report, t_computed;
} pyt_run;

static void run_free(pyt_run *u)
{
    free(u->xlsx_default);
    tl_pyt_sheets_free(&u->sheets);
    tl_trace_free(u->cmp_t);
    if (u->cmp_r) tl_reader_close(u->cmp_r);
    tl_trace_free(u->t);
    if (u->r) tl_reader_close(u->r);
    if (u->s) tl_store_close(u->s);
    tl_plugin_set_free(u->plugins);
    tl_catreg_free(u->cats);
    if (u->arch) tl_pm_arch_free(u->arch);
}

static const char *datadir(void) { return tl_env.datadir ? tl_env.datadir : TL_DATADIR; }

/* The roofline table the flags name, the op categories and plugins of the
 * --extension_file options into c->o; 0 or an exit code. */
static int setup(pyt_cli *c, pyt_run *u)
{
    tl_err err = {0};
    if (c->arch_json || c->arch_platform) {
        int rc = c->arch_json ? tl_pm_arch_load_file(c->arch_json, &u->arch, &err)
                              : tl_pm_arch_load_platform(datadir(), c->arch_platform, &u->arch, &err);
        if (rc) {
            fprintf(stderr, "tracelens: %s\n", err.msg);
            return TL_EXIT_USAGE;
        }
        c->o.arch = u->arch;
    }
    char warn[512];
    u->cats = tl_catreg_builtin(datadir(), warn, sizeof warn);
    if (warn[0]) fprintf(stderr, "tracelens: warning: %s\n", warn);
    for (int i = 0; i < c->next; i++) {
        const char *p = c->ext[i];
        size_t n = strlen(p);
        if (n > 3 && !strcmp(p + n - 3, ".py")) {
            fprintf(stderr, "tracelens: %s: Python extension files are not supported; use a category "
                    "file (op<TAB>category) or a plugin .so (docs/EXTENSIONS.md)\n", p);
            return TL_EXIT_USAGE;
        }
        if (tl_plugin_is_plugin_path(p)) {
            if (!u->plugins) u->plugins = tl_plugin_set_new();
            if (tl_plugin_load(u->plugins, p, &err)) {
                fprintf(stderr, "tracelens: %s\n", err.msg);
                return TL_EXIT_USAGE;
            }
        } else if (tl_catreg_load_tsv(u->cats, p, &err)) {
            fprintf(stderr, "tracelens: %s\n", err.msg);
            return TL_EXIT_USAGE;
        }
    }
    if (u->plugins) tl_plugin_apply_categories(u->plugins, u->cats);
    c->o.categories = u->cats;
    c->o.plugins = u->plugins;
    return TL_EXIT_OK;
}

/* --reference_linking: the reference's runtime -> GPU links on a loaded
 * trace (what: its argument); 0 or an exit code. */
static int reference_links(tl_trace *t, const char *what)
{
    tl_err err = {0};
    size_t dropped;
    if (tl_trace_reference_links(t, &dropped, &err)) {
        fprintf(stderr, "tracelens: %s: %s\n", what, err.msg);
        return TL_EXIT_FAIL;
    }
    if (dropped)
        fprintf(stderr, "tracelens: %s: %zu GPU events linked by correlation id left unlinked "
                        "(--reference_linking: the trace has no ac2g flows)\n", what, dropped);
    return TL_EXIT_OK;
}

/* Loads the comparison trace (what: its argument) through r; 0 or an exit code. */
static int load_kineto(tl_reader *r, uint64_t id, tl_trace_cols cols, const char *what, tl_trace **t)
{
    tl_err err = {0};
    if (tl_trace_load_cols(r, id, cols, t, &err)) {
        fprintf(stderr, "tracelens: %s: %s\n", what, err.msg);
        return tl_cli_exit_for(err.code, TL_EXIT_FAIL);
    }
    if (strcmp((*t)->format, "kineto") != 0) {
        fprintf(stderr, "tracelens: %s is a %s trace, not a PyTorch (Kineto) trace\n", what, (*t)->format);
        return TL_EXIT_USAGE;
    }
    return TL_EXIT_OK;
}

/* --capture_folder that attributes no kernel: the report is the replay's
 * own, which the user did not ask for; say so (summary: graph_launches of
 * the merge, NULL when the merge was stored before). */
static void warn_unmatched_capture(const char *dir, const tl_table *summary)
{
    if (!summary) return;
    long ck = tl_table_col(summary, "kernels attributed");
    int64_t attributed = 0;
    for (size_t r = 0; ck >= 0 && r < summary->nrows; r++)
        if (!tl_table_is_missing(summary, (size_t)ck, r)) attributed += summary->cols[ck].v.i[r];
    if (!summary->nrows)
        fprintf(stderr, "tracelens: warning: --capture_folder %s: the trace has no graph launch; the capture "
                        "traces change nothing\n", dir);
    else if (!attributed)
        fprintf(stderr, "tracelens: warning: --capture_folder %s: none of the %zu graph launches matches a "
                        "capture window; their kernels stay with the launches (graph_launches sheet)\n",
                dir, summary->nrows);
}

/* One derivation of --enable_pseudo_ops (query/inference): how many rows it
 * changes, its id, its build, and what the error names. */
typedef struct pseudo_step {
    size_t (*count)(const tl_trace *t);
    uint64_t (*id)(const tl_trace *t);
    int (*build)(const tl_trace *t, tl_derived *out, tl_err *err);
    const char *what;
} pseudo_step;

/* The trace `*id` derived by step (SGLang profiler op names without their
 * _<digits> suffix; then the pseudo ops), stored as a derived trace (reused
 * when stored before); *id becomes its id when the step changes anything,
 * and u->r is reopened. 0 or an exit code. */
static int derive(pyt_run *u, uint64_t *id, const pseudo_step *step)
{
    tl_err err = {0};
    tl_trace *t = NULL;
    if (tl_trace_load(u->r, *id, &t, &err)) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        return tl_cli_exit_for(err.code, TL_EXIT_FAIL);
    }
    uint64_t nid = step->id(t);
    int rc = 0, have = tl_reader_has(u->r, nid);
    if (!have && step->count(t)) {
        tl_derived d;
        rc = step->build(t, &d, &err);
        if (!rc) {
            tl_build_seal(d.build, &d.info);
            rc = tl_build_commit(d.build, u->s, &d.info, &err);
            tl_derived_free(&d);
        }
        if (!rc) have = 1;
    }
    tl_trace_free(t);
    if (rc) {
        fprintf(stderr, "tracelens: %s: %s\n", step->what, err.msg);
        return tl_cli_exit_for(rc, TL_EXIT_FAIL);
    }
    if (!have) return TL_EXIT_OK;
    *id = nid;
    tl_reader_close(u->r);
    u->r = NULL;
    if (tl_reader_open(u->s, &u->r, &err)) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        return TL_EXIT_STORE;
    }
    return TL_EXIT_OK;
}

static const pseudo_step PSEUDO_STEPS[] = {
    {tl_sglang_names, tl_sglang_names_id, tl_sglang_names_build, "SGLang op names"},
    {tl_pseudo_ops, tl_pseudo_ops_id, tl_pseudo_ops_build, "pseudo ops"},
};

/* Opens (or ingests) the trace, merges graph-capture traces, loads it and
 * the comparison trace; 0 or an exit code. */
static int load(pyt_cli *c, pyt_run *u)
{
    tl_err err = {0};
    size_t il = strlen(c->input);
    if (il > 3 && !strcmp(c->input + il - 3, ".pb")) {
        fprintf(stderr, "tracelens: %s: XPlane (.pb) traces go to TraceLens_generate_perf_report_jax\n", c->input);
        return TL_EXIT_USAGE;
    }
    u->s = tl_cli_store_for(c->db, &c->input, 1);
    if (!u->s) return TL_EXIT_STORE;
    uint64_t id;
    int code = tl_cli_open_trace(u->s, c->input, &u->r, &id);
    if (code) return code;
    /* An ingest (file not yet stored) freed its buffers; hand the freed
     * heap back before the report allocates its own, so the peak is the
     * larger of the two, not their sum. */
    tl_heap_trim();
    tl_mem_mark("ingested");
    if (c->capture_folder) {
        /* The merged trace (replayed kernels attributed to the capturing
         * ops) is stored as its own trace; report on it. */
        uint64_t mid;
        code = tl_cli_graph_merge(u->s, id, c->capture_folder, &mid, &u->graph_launches);
        if (code) return code;
        warn_unmatched_capture(c->capture_folder, u->graph_launches);
        id = mid;
        tl_reader_close(u->r);
        u->r = NULL;
        if (tl_reader_open(u->s, &u->r, &err)) {
            fprintf(stderr, "tracelens: %s\n", err.msg);
            return TL_EXIT_STORE;
        }
    }
    for (size_t k = 0; c->pseudo_ops && k < sizeof PSEUDO_STEPS / sizeof PSEUDO_STEPS[0]; k++)
        if ((code = derive(u, &id, &PSEUDO_STEPS[k]))) return code;
    u->t_load = tl_now();
    /* plugins get the trace and may read any column */
    tl_trace_cols cols = u->plugins ? TL_TRACE_ALL : TL_TRACE_PYTORCH;
    if (c->reference_linking) cols |= TL_TC_FLOWS;
    if (c->o.detect_recompute || c->o.include_call_stack) cols |= TL_TC(PARENT_PY);
    if (tl_cli_mem_budget(u->r, id)) cols |= TL_TC_OWNED;
    if (tl_trace_load_cols(u->r, id, cols, &u->t, &err)) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        return tl_cli_exit_for(err.code, TL_EXIT_FAIL);
    }
    tl_mem_mark("loaded");
    if (strcmp(u->t->format, "kineto") != 0) {
        fprintf(stderr, "tracelens: %s is a %s trace, not a PyTorch (Kineto) trace\n", c->input, u->t->format);
        return TL_EXIT_USAGE;
    }
    if (c->reference_linking && (code = reference_links(u->t, c->input))) return code;
    if (c->comparison) {
        /* the second trace of the comparison: a file (ingested if new) or a
         * stored id, opened now so that a bad path fails before the report */
        uint64_t id2;
        code = tl_cli_open_trace(u->s, c->comparison, &u->cmp_r, &id2);
        if (code) return code;
        if (c->comparison_capture) {
            /* --comparison_capture_folder: the comparison trace with its
             * replayed kernels attributed, as the main trace's */
            tl_reader_close(u->cmp_r);
            u->cmp_r = NULL;
            code = tl_cli_graph_merge(u->s, id2, c->comparison_capture, &id2, NULL);
            if (code) return code;
            if (tl_reader_open(u->s, &u->cmp_r, &err)) {
                fprintf(stderr, "tracelens: %s\n", err.msg);
                return TL_EXIT_STORE;
            }
        }
        if ((code = load_kineto(u->cmp_r, id2, cols, c->comparison, &u->cmp_t))) return code;
        if (c->reference_linking && (code = reference_links(u->cmp_t, c->comparison))) return code;
        c->o.unified_uid_pairs = 1;
    }
    if (!c->o.arch && !c->no_auto_arch) {
        /* The GPU named in deviceProperties picks a shipped roofline table. */
        char gpu[128];
        const char *plat = tl_pyt_auto_platform(u->t, gpu, sizeof gpu);
        if (plat && tl_pm_arch_load_platform(datadir(), plat, &u->arch, &err) == 0) {
            c->o.arch = u->arch;
            fprintf(stderr, "tracelens: roofline for %s (deviceProperties name \"%s\"; "
                            "--gpu_arch_platform / --gpu_arch_json_path override, --no_auto_arch disables)\n",
                    plat, gpu);
        }
    }
    return TL_EXIT_OK;
}

/* A10: TraceDiff with this trace as trace1, both trees built like the
 * report's (python functions in when it uses them); the LCA columns go into
 * unified_perf_summary, diff_stats after the reference's sheets. */
static int add_comparison(pyt_cli *c, pyt_run *u)
{
    tl_err err = {0};
    tl_diff_opts dopts = {.python = c->o.detect_recompute || c->o.include_call_stack};
    tl_table *ds = NULL;
    tl_table *us = tl_pyt_sheet(&u->sheets, "unified_perf_summary");
    if (us && us->nrows) {
        if (tl_diff_comparison_sheets(u->t, u->cmp_t, &dopts, us, u->sheets.uid_pair_uid, u->sheets.uid_pair_row,
                                      u->sheets.npairs, &ds, &err)) {
            fprintf(stderr, "tracelens: comparison with %s: %s\n", c->comparison, err.msg);
            return TL_EXIT_FAIL;
        }
        if (ds) {
            tl_vec_reserve(&u->sheets, 1);
            u->sheets.v[u->sheets.n++] = ds;
        }
    }
    tl_trace_free(u->cmp_t);
    u->cmp_t = NULL;
    tl_reader_close(u->cmp_r);
    u->cmp_r = NULL;
    return TL_EXIT_OK;
}

/* --inference_phase_analysis: the phase sheets, in their places. */
static void add_phases(pyt_cli *c, pyt_run *u)
{
    tl_err err = {0};
    tl_phase_opts po;
    tl_phase_opts_default(&po);
    if (c->phase_method) po.method = tl_phase_method_parse(c->phase_method, NULL); /* checked when parsed */
    if (c->plots_asked && !c->plots_disabled)
        fprintf(stderr, "tracelens: note: phase plots are not drawn (the branch's matplotlib figures); the "
                        "phase sheets hold their data\n");
    if (c->decode_threshold > 0) po.decode_threshold = c->decode_threshold;
    po.kernel_summary = c->o.kernel_summary;
    po.no_annotations = c->no_phase_annotations;
    tl_pyt_sheets ph = {0};
    if (tl_phase_sheets(u->t, &c->o, &po, &ph, &err)) {
        fprintf(stderr, "tracelens: warning: phase analysis: %s\n", err.msg); /* reference: warn, no sheets */
    } else {
        /* the branch's ops_summary_by_category replaces the report's */
        for (size_t k = 0; k < ph.n; k++) {
            for (size_t q = 0; q < u->sheets.n && ph.v[k]; q++)
                if (!strcmp(u->sheets.v[q]->name, ph.v[k]->name)) {
                    tl_table_free(u->sheets.v[q]);
                    u->sheets.v[q] = ph.v[k];
                    ph.v[k] = NULL;
                }
        }
        size_t n = 0;
        for (size_t k = 0; k < ph.n; k++)
            if (ph.v[k]) ph.v[n++] = ph.v[k];
        ph.n = n;
        tl_pyt_insert_phase_sheets(&u->sheets, &ph);
        tl_inference_kernel_categories(&u->sheets, c->o.fix_quirks);
    }
    tl_pyt_sheets_free(&ph);
}

/* The sheets: the report, the comparison, ops without a perf model, the
 * phase sheets, the graph launches; 0 or an exit code. */
static int compute(pyt_cli *c, pyt_run *u)
{
    tl_err err = {0};
    u->t_report = tl_now();
    if (tl_pytorch_report(u->t, &c->o, &u->sheets, &err)) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        return TL_EXIT_FAIL;
    }
    int code;
    if (u->cmp_t && (code = add_comparison(c, u))) return code;
    if (c->variant && c->variant->inference) tl_inference_report_sheets(&u->sheets);
    tl_pyt_add_ops_without_perf_model(&u->sheets);
    if (!c->capture_folder) {
        u->graph_launches = tl_gr_launch_table(u->t);
        if (u->graph_launches)
            fprintf(stderr, "tracelens: note: kernels replayed from CUDA/HIP graphs; --capture_folder DIR "
                            "(graph-capture traces) attributes them to their CPU ops\n");
    }
    if (c->phase) add_phases(c, u);
    if (u->graph_launches) {
        tl_vec_reserve(&u->sheets, 1);
        u->sheets.v[u->sheets.n++] = u->graph_launches;
        u->graph_launches = NULL;
    }
    return TL_EXIT_OK;
}

/* --html: the page, its roof from the roofline's GPU table when one is in
 * use (the highest peak of any compute spec); 0 or an exit code. */
static int write_html(const pyt_cli *c, const tl_pyt_sheets *sh)
{
    tl_html_opts ho = {0};
    char title[512];
    snprintf(title, sizeof title, "tracelens report: %s", c->input ? c->input : "");
    ho.title = title;
    const tl_pm_arch *a = c->o.arch;
    if (a && a->has_mem_bw) {
        ho.arch_name = a->name;
        ho.mem_bw_tbs = a->mem_bw_gbps / 1000.0;
        for (size_t k = 0; k < a->npeaks; k++)
            if (a->peak_tflops[k] > ho.peak_tflops) ho.peak_tflops = a->peak_tflops[k];
    }
    tl_err err = {0};
    if (tl_report_html_write(c->html, sh->v, sh->n, &ho, &err)) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        return TL_EXIT_FAIL;
    }
    printf("wrote %s\n", c->html);
    return TL_EXIT_OK;
}

/* CSVs, the workbook or the terminal summary; 0 or an exit code. */
static int write_outputs(pyt_cli *c, pyt_run *u)
{
    tl_err err = {0};
    const tl_pyt_sheets *sh = &u->sheets;
    for (size_t i = 0; i < sh->npending; i++)
        fprintf(stderr, "tracelens: note: sheet %s is not available in this build\n", sh->pending[i]);
    if (c->csv_dir) {
        if (tl_report_csv_write_dir(sh->v, sh->n, c->csv_dir, &err)) {
            fprintf(stderr, "tracelens: %s\n", err.msg);
            return TL_EXIT_FAIL;
        }
        if (c->tracelens_style) printf("wrote %zu CSV files to %s\n", sh->n, c->csv_dir);
        else /* the reference's own lines */
            for (size_t i = 0; i < sh->n; i++)
                printf("DataFrame '%s' written to %s/%s.csv\n", sh->v[i]->name, c->csv_dir, sh->v[i]->name);
    }
    if (u->xlsx) {
        int code = write_xlsx(u->xlsx, sh, c->o.arch);
        if (code) return code;
        if (c->tracelens_style) printf("wrote %s (%zu sheets)\n", u->xlsx, sh->n);
        else printf("DataFrames successfully written to %s\n", u->xlsx);
    }
    if (c->html) {
        int code = write_html(c, sh);
        if (code) return code;
    }
    if (c->tracelens_style && !c->xlsx && !c->csv_dir && !c->html) print_summary(sh, u->t->id, c->input);
    return TL_EXIT_OK;
}

/* Runs the report for a parsed command line on a stored/ingested trace. */
static int run(pyt_cli *c)
{
    return_freed_memory();
    pyt_run u;
    memset(&u, 0, sizeof u);
    u.xlsx = c->xlsx;
    if (!u.xlsx && !c->csv_dir && !c->html && !c->tracelens_style) u.xlsx = u.xlsx_default = default_xlsx(c->input);
    int code = setup(c, &u);
    if (!code) code = load(c, &u);
    if (!code) code = compute(c, &u);
    if (!code) {
        u.t_computed = tl_now();
        tl_mem_mark("computed");
        code = write_outputs(c, &u);
    }
    if (!code) {
        tl_mem_mark("written");
        /* TRACELENS_TIMING=1: phase times on stderr (bench/report reads them) */
        if (tl_env.timing)
            fprintf(stderr, "timing: load_ms=%.2f report_ms=%.2f write_ms=%.2f\n", (u.t_report - u.t_load) * 1e3,
                    (u.t_computed - u.t_report) * 1e3, (tl_now() - u.t_computed) * 1e3);
    }
    tl_table_free(u.graph_launches);
    run_free(&u);
    return code;
}

/* JSON bytes of the trace file input (st: its stat), estimated without
 * reading it: a plain file's size, a gzip file's ISIZE trailer (the size
 * mod 2^32; at least 8x the compressed size); 0 when unknown. */
static uint64_t input_json_bytes(const char *input, const struct stat *st)
{
    FILE *f = fopen(input, "rb");
    if (!f) return 0;
    unsigned char m[2] = {0}, z[4] = {0};
    uint64_t est = (uint64_t)st->st_size;
    if (fread(m, 1, 2, f) == 2 && m[0] == 0x1f && m[1] == 0x8b && st->st_size >= 18 &&
        fseek(f, -4, SEEK_END) == 0 && fread(z, 1, 4, f) == 4) {
        uint64_t isize = (uint64_t)z[0] | (uint64_t)z[1] << 8 | (uint64_t)z[2] << 16 | (uint64_t)z[3] << 24;
        est = (uint64_t)st->st_size * 8;
        if (isize > est) est = isize;
    }
    fclose(f);
    return est;
}

/* Does an existing store hold the trace this id (or prefix) names? */
static int stored_trace(const char *input, const char *db)
{
    char buf[4096];
    struct stat st;
    const char *dir = tl_cli_store_dir(db, buf, sizeof buf);
    if (stat(dir, &st) != 0) return 0;
    tl_store *s;
    tl_reader *r;
    tl_err err = {0};
    uint64_t id;
    int found = 0;
    if (tl_store_open(dir, &s, &err)) return 0;
    if (tl_reader_open(s, &r, &err) == 0) {
        found = tl_reader_resolve(r, input, &id, &err) == 0;
        tl_reader_close(r);
    }
    tl_store_close(s);
    return found;
}

/* Huge pages pay off in time where page faults dominate; their cost is
 * memory: 2 MiB granules of every malloc arena and block, a large share of
 * the peak for a small trace. So a file (ingested first when not stored
 * yet) below this JSON size is reported on 4 KiB pages. */
#define HUGEPAGES_MIN_JSON ((uint64_t)256 << 20)

/* The report's gate for tl_cli_hugepages_reexec (tools/cli_hugepages.c):
 * a trace named by its id in the store (the report is then all the work,
 * and most of its page faults go away with huge pages), or a file of
 * HUGEPAGES_MIN_JSON and more. The cheap checks come first, so that after
 * the re-exec the store is not opened again. */
void tl_cli_report_hugepages_reexec(const char *input, const char *db)
{
    if (!tl_cli_hugepages_wanted() || !input) return;
    struct stat st;
    int is_file = stat(input, &st) == 0 && S_ISREG(st.st_mode);
    if (is_file ? input_json_bytes(input, &st) < HUGEPAGES_MIN_JSON : !stored_trace(input, db)) return;
    tl_cli_hugepages_reexec();
}

int tl_cli_report_pytorch_as(int argc, char **argv, const tl_cli_report_variant *v, int tracelens_style)
{
    pyt_cli c;
    memset(&c, 0, sizeof c);
    c.variant = v;
    c.tracelens_style = tracelens_style;
    int code = parse_args(&c, argc, argv);
    if (code) return code;
    if (!tracelens_style) tl_cli_report_hugepages_reexec(c.input, c.db);
    return run(&c);
}

int tl_cmd_report_pytorch(int argc, char **argv)
{
    return tl_cli_report_pytorch_as(argc, argv, NULL, 0);
}

/* `tracelens report` on a Kineto trace (called by tools/cmd_report.c with
 * argv[0] = "report"). */
int tl_cmd_report_kineto(int argc, char **argv)
{
    return tl_cli_report_pytorch_as(argc, argv, NULL, 1);
}
