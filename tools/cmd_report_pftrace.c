/* cmd_report_pftrace.c — the reference tool's reports of rocprofv3's
 * Perfetto output: TraceLens_generate_perf_report_pftrace_hip_api,
 * _pftrace_hip_activity and _pftrace_memory_copy (same flags, defaults
 * and output naming), and the pftrace branch of `tracelens report`. The
 * .pftrace is read natively (no traceconv); its traceEvents JSON form is
 * read too. Parses arguments, ingests the file when needed, runs
 * query/pftrace and writes the sheets; no analysis here. */
#include "tools/cli.h"
#include "ingest/ingest.h"
#include "query/pftrace/pftrace.h"
#include "query/core/trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef enum { PF_HIP_API, PF_ACTIVITY, PF_MEMCPY } pf_kind;

static const char *const PROG[] = {
    [PF_HIP_API] = "TraceLens_generate_perf_report_pftrace_hip_api",
    [PF_ACTIVITY] = "TraceLens_generate_perf_report_pftrace_hip_activity",
    [PF_MEMCPY] = "TraceLens_generate_perf_report_pftrace_memory_copy",
};
static const char *const XLSX_SUFFIX[] = {
    [PF_HIP_API] = "_pftrace_hip_api_report.xlsx",
    [PF_ACTIVITY] = "_pftrace_activity_report.xlsx",
    [PF_MEMCPY] = "_pftrace_memory_copy_report.xlsx",
};

/* The summary's head: "<WHAT> of trace <id>". */
static const char *const WHAT[] = {
    [PF_HIP_API] = "pftrace HIP API report",
    [PF_ACTIVITY] = "pftrace HIP activity report",
    [PF_MEMCPY] = "pftrace memory-copy report",
};

static const char *HELP_COMMON =
    "  --trace_path PATH         the trace: a rocprofv3 .pftrace (read natively), or\n"
    "                            its traceEvents JSON (.json, .json.gz); required\n"
    "                            unless a stored trace ID is given as argument\n"
    "  --output_xlsx_path PATH   workbook to write; default: the trace path without\n"
    "                            .pftrace / .json.gz / its last suffix + %s\n"
    "  --output_csvs_dir DIR     write one <sheet>.csv per sheet into DIR (created)\n"
    "                            instead of the workbook\n"
    "  --traceconv PATH          accepted for compatibility and unused: tracelens\n"
    "                            reads .pftrace files itself, without traceconv\n"
    "options of tracelens:\n"
    "  --html PATH               also (or only) one self-contained HTML page\n"
    "  --summary                 print a terminal summary instead of writing files\n"
    "                            (what `tracelens report ID` does without an output)\n"
    "  --db DIR                  the trace store (default $TRACELENS_DB, else\n"
    "                            $XDG_DATA_HOME/tracelens)\n"
    "  -h, --help                this text\n";

static const char *HELP_HEAD[] = {
    [PF_HIP_API] =
        "usage: %s --trace_path PATH [options]\n"
        "\n"
        "HIP API <-> kernel summary of a rocprofv3 Perfetto trace: HIP launch calls\n"
        "joined to the kernels of their correlation id, one row per (PID, TID, DevId,\n"
        "API Name, Kernel Name) with the count and the mean, median, min, max and\n"
        "population std of T = A (API) + Q (kernel start - API end, at least 0) +\n"
        "K (kernel), in ns. Sheet api_kernel_summary.\n"
        "\n"
        "options (those of the reference tool, same defaults):\n"
        "  --exclude_kernel_regex R  kernels whose name matches R (Python syntax:\n"
        "                            \\d \\w \\s, sets, (?:...)) are left out; default\n"
        "                            '(?:^|\\W)redzone_checker_kernel(?:\\W|$)'; '' none\n"
        "  --allow_multi_kernel_per_api  every kernel of a correlation id counts (by\n"
        "                            default only the earliest)\n"
        "  --include_nonlaunch_apis  also HIP calls that are not launches, and calls\n"
        "                            without a kernel (T empty, Q and K 0)\n",
    [PF_ACTIVITY] =
        "usage: %s --trace_path PATH [options]\n"
        "\n"
        "GPU activity of a rocprofv3 Perfetto trace: category_summary (per GPU agent\n"
        "and their mean: time and count per kernel category, RCCL overlap), xla_top,\n"
        "kernel_summary and hip_summary (NSYS-style tables).\n"
        "\n"
        "options (those of the reference tool, same defaults):\n"
        "  --merge_kernels           strip digits from kernel names before grouping\n"
        "  --min_tid N, --max_tid N  keep events whose tid is in [N, M] (default\n"
        "                            -1000000000 .. 1000000000)\n"
        "  --min_event_ns N          drop events shorter than N ns (default 5000)\n"
        "  --no_kernel_summary       leave out kernel_summary\n"
        "  --kernel_summary_include_rccl  RCCL kernels in kernel_summary too\n"
        "  --kernel_summary_baseline {total,compute}  Time %% of what (default total)\n"
        "  --kernel_summary_group {config,name}  group kernels by name and launch\n"
        "                            configuration, or by name (default config)\n"
        "  --no_hip_summary          leave out hip_summary\n"
        "  --hip_summary_group {name,name+stream,name+op,name+stream+op}\n"
        "                            (default name)\n"
        "  --top_xla N               rows of xla_top (default 30)\n"
        "  --kernel_summary_top N, --hip_summary_top N  Markdown rows (default 200)\n"
        "  --output_md_path PATH, --write_md  the Markdown report: not written by\n"
        "                            tracelens (exit 2)\n",
    [PF_MEMCPY] =
        "usage: %s --trace_path PATH [options]\n"
        "\n"
        "Memory copies of a rocprofv3 Perfetto trace: the number of memory_copy events\n"
        "per (copy_bytes, direction), direction h2d (GPU n), d2h (GPU n),\n"
        "d2d (GPU n -> GPU m) or other. Sheet memory_copy_by_copy_bytes.\n"
        "\n"
        "options (those of the reference tool):\n",
};

static const char *HELP_TAIL =
    "\n"
    "Flags may be abbreviated to a unique prefix, as with the reference tool.\n"
    "exit status: 0 ok; 1 input missing, not a Perfetto trace or its JSON, or the\n"
    "report failed; 2 bad command line; 3 store error; 4 no such trace id.\n";

enum {
    O_HELP, O_PATH, O_XLSX, O_CSV, O_TRACECONV, O_HTML, O_SUMMARY, O_DB,
    O_EXCL, O_MULTI, O_NONLAUNCH,
    O_MD, O_WRITE_MD, O_MERGE, O_MIN_TID, O_MAX_TID, O_MIN_NS, O_NO_KSUM, O_KS_RCCL, O_KS_BASE, O_KS_GROUP,
    O_NO_HIP, O_HIP_GROUP, O_TOP_XLA, O_KS_TOP, O_HIP_TOP,
    O_N
};
static const tl_cli_opt OPTS[O_N] = {
    [O_HELP] = {"-h|--help", TL_CLI_FLAG},
    [O_PATH] = {"--trace_path", TL_CLI_VALUE},
    [O_XLSX] = {"--output_xlsx_path", TL_CLI_VALUE},
    [O_CSV] = {"--output_csvs_dir", TL_CLI_VALUE},
    [O_TRACECONV] = {"--traceconv", TL_CLI_VALUE},
    [O_HTML] = {"--html", TL_CLI_VALUE},
    [O_SUMMARY] = {"--summary", TL_CLI_FLAG},
    [O_DB] = {"--db", TL_CLI_VALUE},
    [O_EXCL] = {"--exclude_kernel_regex", TL_CLI_VALUE},
    [O_MULTI] = {"--allow_multi_kernel_per_api", TL_CLI_FLAG},
    [O_NONLAUNCH] = {"--include_nonlaunch_apis", TL_CLI_FLAG},
    [O_MD] = {"--output_md_path", TL_CLI_VALUE},
    [O_WRITE_MD] = {"--write_md", TL_CLI_FLAG},
    [O_MERGE] = {"--merge_kernels", TL_CLI_FLAG},
    [O_MIN_TID] = {"--min_tid", TL_CLI_VALUE},
    [O_MAX_TID] = {"--max_tid", TL_CLI_VALUE},
    [O_MIN_NS] = {"--min_event_ns", TL_CLI_VALUE},
    [O_NO_KSUM] = {"--no_kernel_summary", TL_CLI_FLAG},
    [O_KS_RCCL] = {"--kernel_summary_include_rccl", TL_CLI_FLAG},
    [O_KS_BASE] = {"--kernel_summary_baseline", TL_CLI_VALUE},
    [O_KS_GROUP] = {"--kernel_summary_group", TL_CLI_VALUE},
    [O_NO_HIP] = {"--no_hip_summary", TL_CLI_FLAG},
    [O_HIP_GROUP] = {"--hip_summary_group", TL_CLI_VALUE},
    [O_TOP_XLA] = {"--top_xla", TL_CLI_VALUE},
    [O_KS_TOP] = {"--kernel_summary_top", TL_CLI_VALUE},
    [O_HIP_TOP] = {"--hip_summary_top", TL_CLI_VALUE},
};

/* The options each command has (argparse rejects the others). */
static int has_opt(pf_kind k, int o)
{
    if (o <= O_DB) return 1;
    if (o <= O_NONLAUNCH) return k == PF_HIP_API;
    return k == PF_ACTIVITY;
}

static int usage_error(const char *prog, const char *fmt, const char *arg)
{
    fprintf(stderr, "usage: %s --trace_path PATH [options] (see --help)\n%s: error: ", prog, prog);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return TL_EXIT_USAGE;
}

static int parse_ll(const char *s, long long *v)
{
    char *end;
    errno = 0;
    while (*s == ' ') s++;
    *v = strtoll(s, &end, 10);
    while (*end == ' ') end++;
    return errno || end == s || *end;
}

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

/* The reference's default workbook: .pftrace and .json.gz cut off, else
 * the last suffix of the file name (Path.with_suffix("")). */
static char *default_xlsx(const char *in, pf_kind k)
{
    size_t n = strlen(in);
    size_t cut = n;
    if (ends_with(in, ".pftrace")) cut = n - 8;
    else if (ends_with(in, ".json.gz")) cut = n - 8;
    else {
        const char *slash = strrchr(in, '/');
        const char *base = slash ? slash + 1 : in;
        const char *dot = strrchr(base, '.');
        if (dot && dot > base && dot[1]) cut = (size_t)(dot - in);
    }
    char *out = tl_xmalloc(cut + strlen(XLSX_SUFFIX[k]) + 1);
    memcpy(out, in, cut);
    strcpy(out + cut, XLSX_SUFFIX[k]);
    return out;
}

typedef struct pf_cmd {
    pf_kind kind;
    const char *prog;
    const char *val[O_N];
    int set[O_N];
    const char *positional;
    tl_pf_hip_api_opts api;
    tl_pf_activity_opts act;
} pf_cmd;

static int choice(const pf_cmd *c, int o, const char *const *choices, int *idx)
{
    for (int i = 0; choices[i]; i++)
        if (!strcmp(c->val[o], choices[i])) {
            *idx = i;
            return 0;
        }
    char msg[256];
    int n = snprintf(msg, sizeof msg, "argument %s: invalid choice: '%%s' (choose from ", OPTS[o].names);
    for (int i = 0; choices[i] && n < (int)sizeof msg; i++)
        n += snprintf(msg + n, sizeof msg - (size_t)n, "%s'%s'", i ? ", " : "", choices[i]);
    if (n < (int)sizeof msg) snprintf(msg + n, sizeof msg - (size_t)n, ")");
    return usage_error(c->prog, msg, c->val[o]);
}

static int int_opt(const pf_cmd *c, int o, long long *v)
{
    if (!c->set[o]) return 0;
    if (parse_ll(c->val[o], v)) {
        char msg[128];
        snprintf(msg, sizeof msg, "argument %s: invalid int value: '%%s'", OPTS[o].names);
        return usage_error(c->prog, msg, c->val[o]);
    }
    return 0;
}

/* The options into c->api / c->act; an exit code when one is bad. */
static int take_options(pf_cmd *c)
{
    c->api.exclude_kernel_regex = c->set[O_EXCL] ? c->val[O_EXCL] : TL_PF_DEFAULT_EXCLUDE;
    c->api.allow_multi_kernel_per_api = c->set[O_MULTI];
    c->api.include_nonlaunch_apis = c->set[O_NONLAUNCH];
    tl_pf_activity_opts *a = &c->act;
    tl_pf_activity_opts_default(a);
    if (c->set[O_MD] || c->set[O_WRITE_MD])
        return usage_error(c->prog, "%s: the Markdown report is not written by tracelens; use the sheets",
                           c->set[O_MD] ? "--output_md_path" : "--write_md");
    a->merge_kernels = c->set[O_MERGE];
    a->kernel_summary = !c->set[O_NO_KSUM];
    a->kernel_summary_include_rccl = c->set[O_KS_RCCL];
    a->hip_summary = !c->set[O_NO_HIP];
    long long v;
    int rc;
    if ((rc = int_opt(c, O_MIN_TID, &v))) return rc;
    if (c->set[O_MIN_TID]) a->min_tid = v;
    if ((rc = int_opt(c, O_MAX_TID, &v))) return rc;
    if (c->set[O_MAX_TID]) a->max_tid = v;
    if ((rc = int_opt(c, O_MIN_NS, &v))) return rc;
    if (c->set[O_MIN_NS]) a->min_event_ns = v;
    if ((rc = int_opt(c, O_TOP_XLA, &a->top_xla))) return rc;
    if ((rc = int_opt(c, O_KS_TOP, &a->kernel_summary_top))) return rc;
    if ((rc = int_opt(c, O_HIP_TOP, &a->hip_summary_top))) return rc;
    int idx;
    static const char *const bases[] = {"total", "compute", NULL};
    static const char *const groups[] = {"config", "name", NULL};
    static const char *const hips[] = {"name", "name+stream", "name+op", "name+stream+op", NULL};
    if (c->set[O_KS_BASE]) {
        if ((rc = choice(c, O_KS_BASE, bases, &idx))) return rc;
        a->baseline_compute = idx == 1;
    }
    if (c->set[O_KS_GROUP]) {
        if ((rc = choice(c, O_KS_GROUP, groups, &idx))) return rc;
        a->group_by_name = idx == 1;
    }
    if (c->set[O_HIP_GROUP]) {
        if ((rc = choice(c, O_HIP_GROUP, hips, &idx))) return rc;
        a->hip_summary_group = hips[idx];
    }
    return 0;
}

static int parse_cmdline(pf_cmd *c, int argc, char **argv)
{
    /* this command's options only, so that prefixes resolve as in its
     * argparse parser (another command's options never match) */
    tl_cli_opt opts[O_N];
    int which[O_N], n = 0;
    for (int o = 0; o < O_N; o++)
        if (has_opt(c->kind, o)) which[n] = o, opts[n++] = OPTS[o];
    tl_cli_args p;
    tl_cli_args_init(&p, argc, argv, opts, (size_t)n);
    for (int k; (k = tl_cli_next(&p)) != TL_CLI_END;) {
        int f = k >= 0 ? which[k] : k;
        if (f == TL_CLI_POSITIONAL) {
            if (c->positional) return usage_error(c->prog, "unrecognized arguments: %s", p.arg);
            c->positional = p.arg;
            continue;
        }
        if (f == TL_CLI_BAD) return usage_error(c->prog, "%s", p.msg);
        if (f < 0) {
            char msg[256];
            snprintf(msg, sizeof msg, "unrecognized arguments: %%s%s", tl_cli_hint(&p));
            return usage_error(c->prog, msg, p.arg);
        }
        if (f == O_HELP) {
            printf(HELP_HEAD[c->kind], c->prog);
            printf(HELP_COMMON, XLSX_SUFFIX[c->kind]);
            fputs(HELP_TAIL, stdout);
            return -1;
        }
        c->set[f] = 1;
        c->val[f] = p.val;
    }
    return take_options(c);
}

/* The sheets of c's report over trace t into sheets[]; an exit code. */
static int run_report(pf_cmd *c, const tl_trace *t, tl_table **sheets, size_t *n, tl_err *err)
{
    *n = 0;
    if (c->kind == PF_HIP_API) {
        if (tl_pf_hip_api_report(t, &c->api, &sheets[0], err)) return 1;
        *n = 1;
    } else if (c->kind == PF_MEMCPY) {
        if (tl_pf_memory_copy_report(t, &sheets[0], err)) return 1;
        *n = 1;
    } else {
        tl_pf_activity_result res;
        if (tl_pf_activity_report(t, &c->act, &res, err)) return 1;
        fprintf(stderr, "  Detected GPUs (agents): %s\n", res.agents ? res.agents : "");
        for (size_t i = 0; i < res.nsheets; i++) sheets[(*n)++] = res.sheets[i];
        res.nsheets = 0;
        tl_pf_activity_result_free(&res);
    }
    return 0;
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Opens the trace (ingesting a file first) into *r, *id; an exit code. */
static int open_input(pf_cmd *c, tl_store *s, const char *input, int file, tl_reader **r, uint64_t *id)
{
    tl_err err = {0};
    if (!file) return tl_cli_open_trace(s, input, r, id);
    if (!ends_with(input, ".pftrace") && !ends_with(input, ".json") && !ends_with(input, ".json.gz")) {
        fprintf(stderr, "%s: Unsupported trace format: %s. Use .json, .json.gz, or .pftrace.\n", c->prog, input);
        return TL_EXIT_FAIL;
    }
    tl_ingest_opts io = {.progress = 1, .rank = -1};
    tl_cli_ingest_env(&io);
    tl_ingest_result ir;
    if (tl_ingest_file(s, input, &io, &ir, &err)) {
        fprintf(stderr, "%s: Error loading trace data: %s\n", c->prog, err.msg);
        return TL_EXIT_FAIL;
    }
    *id = ir.id;
    if (tl_reader_open(s, r, &err)) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        return TL_EXIT_STORE;
    }
    return TL_EXIT_OK;
}

static int run_cmd(pf_kind kind, int argc, char **argv)
{
    pf_cmd c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.prog = argc > 0 && strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argc > 0 ? argv[0] : PROG[kind];
    int rc = parse_cmdline(&c, argc, argv);
    if (rc) return rc < 0 ? TL_EXIT_OK : rc;
    const char *input = c.val[O_PATH];
    if (input && c.positional)
        return usage_error(c.prog, "give the trace either as --trace_path or as ID|FILE, not both (%s)", c.positional);
    int by_flag = input != NULL;
    if (!input) input = c.positional;
    if (!input) return usage_error(c.prog, "the following arguments are required: %s", "--trace_path");
    int file = is_file(input);
    if (by_flag && !file) {
        fprintf(stderr, "Input file not found: %s\n", input);
        return TL_EXIT_FAIL;
    }
    tl_store *s = tl_cli_store_for(c.val[O_DB], &input, 1);
    if (!s) return TL_EXIT_STORE;
    tl_reader *r = NULL;
    tl_trace *t = NULL;
    tl_table *sheets[TL_PF_ACTIVITY_MAX_SHEETS] = {0};
    size_t nsheets = 0;
    char *xlsx = NULL;
    uint64_t id = 0;
    tl_err err = {0};
    if ((rc = open_input(&c, s, input, file, &r, &id))) goto out;
    if (tl_trace_load(r, id, &t, &err)) {
        fprintf(stderr, "%s: Error loading trace data: %s\n", c.prog, err.msg);
        rc = tl_cli_exit_for(err.code, TL_EXIT_FAIL);
        goto out;
    }
    if (strcmp(t->format, "pftrace") && strcmp(t->format, "kineto")) {
        fprintf(stderr, "%s: Not a valid Perfetto-style trace: %s is a %s trace\n", c.prog, input, t->format);
        rc = TL_EXIT_FAIL;
        goto out;
    }
    fprintf(stderr, "  Found %zu trace events\n", t->n);
    if (run_report(&c, t, sheets, &nsheets, &err)) {
        fprintf(stderr, "%s: Error generating report: %s\n", c.prog, err.msg);
        rc = err.code == TL_EUSAGE ? TL_EXIT_USAGE : TL_EXIT_FAIL;
        goto out;
    }
    for (size_t i = 0; i < nsheets; i++) fprintf(stderr, "  - %s (%zu rows)\n", sheets[i]->name, sheets[i]->nrows);
    if (c.set[O_SUMMARY] && !c.val[O_XLSX] && !c.val[O_CSV] && !c.val[O_HTML]) {
        static const char *const SHOW[] = {"category_summary", "kernel_summary", "hip_summary",
                                           "api_kernel_summary", "memory_copy_by_copy_bytes", NULL};
        tl_cli_print_summary(WHAT[kind], id, input, sheets, nsheets, SHOW);
        goto out;
    }
    if (c.val[O_HTML] && (rc = tl_cli_write_html(sheets, nsheets, c.val[O_HTML], input)) != TL_EXIT_OK) goto out;
    if (c.val[O_HTML] && !c.val[O_XLSX] && !c.val[O_CSV]) goto out;
    const char *csv = c.val[O_CSV];
    if (!csv) {
        if (c.val[O_XLSX]) {
            xlsx = tl_xstrdup(c.val[O_XLSX]);
        } else if (file) {
            xlsx = default_xlsx(input, kind);
        } else {
            char hex[17];
            tl_id_format(id, hex);
            xlsx = default_xlsx(hex, kind);
        }
    }
    rc = tl_cli_write_sheets(sheets, nsheets, csv, xlsx, 0);
    if (rc == TL_EXIT_OK) fprintf(stderr, "Report written to %s\n", csv ? csv : xlsx);
out:
    for (size_t i = 0; i < nsheets; i++) tl_table_free(sheets[i]);
    if (t) tl_trace_free(t);
    if (r) tl_reader_close(r);
    tl_store_close(s);
    free(xlsx);
    return rc;
}

int tl_cmd_report_pftrace_hip_api(int argc, char **argv) { return run_cmd(PF_HIP_API, argc, argv); }
int tl_cmd_report_pftrace_hip_activity(int argc, char **argv) { return run_cmd(PF_ACTIVITY, argc, argv); }
int tl_cmd_report_pftrace_memory_copy(int argc, char **argv) { return run_cmd(PF_MEMCPY, argc, argv); }
