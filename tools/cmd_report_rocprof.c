/* cmd_report_rocprof.c — `TraceLens_generate_perf_report_rocprof` (the
 * reference tool's command, same flags, defaults and output naming: spec
 * formats.md §1.8) and the rocprof branch of `tracelens report ID|FILE`.
 * It only parses arguments, ingests the file into the store when needed,
 * runs query/rocprof_report and writes the sheets. */
#include "tools/cli.h"
#include "ingest/ingest.h"
#include "ingest/rocprof.h"
#include "query/rocprof/rocprof.h"
#include "query/core/trace.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static const char *HELP =
    "usage: TraceLens_generate_perf_report_rocprof --profile_json_path PATH [options]\n"
    "       tracelens report ID|FILE [options]            (for a rocprofv3 trace)\n"
    "\n"
    "Performance report of a rocprofv3 JSON trace (rocprofiler-sdk-tool output,\n"
    "plain or gzip, recognised by content): sheets gpu_timeline, kernel_summary,\n"
    "kernel_summary_by_category, and on request kernel_details,\n"
    "short_kernels_summary and short_kernel_histogram. The file is ingested into\n"
    "the trace store first (a no-op when it is already there); a stored trace can\n"
    "be named by its id instead.\n"
    "\n"
    "options (those of the reference tool, same defaults):\n"
    "  --profile_json_path PATH      rocprofv3 *_results.json or .json.gz (required\n"
    "                                unless ID|FILE is given as a positional argument)\n"
    "  --output_xlsx_path PATH       workbook to write; default: the input path with\n"
    "                                _results.json (or everything from the last .json)\n"
    "                                replaced by _perf_report.xlsx\n"
    "  --output_csvs_dir DIR         write one <sheet>.csv per sheet into DIR instead\n"
    "                                of the workbook (DIR is created if missing)\n"
    "  --disable_kernel_summary      leave out kernel_summary and\n"
    "                                kernel_summary_by_category (on by default)\n"
    "  --kernel_details              add kernel_details: one row per dispatch,\n"
    "                                longest first\n"
    "  --topk_kernels N              keep only the first N rows of kernel_details\n"
    "  --short_kernel_study          add short_kernels_summary and\n"
    "                                short_kernel_histogram\n"
    "  --short_kernel_threshold_us T kernels shorter than T count as short (default\n"
    "                                10; microseconds, see --reference-units)\n"
    "  --short_kernel_histogram_bins B  bins of short_kernel_histogram (default 100)\n"
    "\n"
    "options of tracelens:\n"
    "  --reference-units             reproduce the reference tool's numbers exactly.\n"
    "                                The reference leaves nanoseconds in the columns\n"
    "                                labelled (µs) and microseconds in those labelled\n"
    "                                (ms), compares the short-kernel threshold with\n"
    "                                nanoseconds (so 10 means 10 ns), and computes\n"
    "                                'Cumulative Percentage (%)' in name / category\n"
    "                                order before sorting the rows by time. Without\n"
    "                                this flag every column holds the unit its label\n"
    "                                names, the threshold is in µs, and the\n"
    "                                cumulative percentage runs down the printed rows.\n"
    "                                See docs/CONFORMANCE.md. On a terminal a note\n"
    "                                says so once per user (marked in\n"
    "                                $XDG_STATE_HOME/tracelens, ~/.local/state).\n"
    "  --db DIR                      trace store (default $TRACELENS_DB, else\n"
    "                                $XDG_DATA_HOME/tracelens)\n"
    "  --html PATH                   also (or only) one self-contained HTML page\n"
    "  --summary                     print a terminal summary instead of writing\n"
    "                                files (what `tracelens report ID` does)\n"
    "  -h, --help                    this text\n"
    "\n"
    "Flags may be abbreviated to a unique prefix, as with the reference tool.\n"
    "exit status: 0 ok; 1 input missing or not a rocprofv3 file, or the report\n"
    "failed; 2 bad command line; 3 store error; 4 no such trace id.\n";

enum { F_PATH, F_XLSX, F_CSV, F_NOSUM, F_DETAILS, F_SHORT, F_THRESH, F_BINS, F_TOPK, F_REF, F_DB, F_HELP,
       F_SUMMARY, F_HTML, F_N };
static const tl_cli_opt FLAGS[F_N] = {
    [F_PATH] = {"--profile_json_path", TL_CLI_VALUE},
    [F_XLSX] = {"--output_xlsx_path", TL_CLI_VALUE},
    [F_CSV] = {"--output_csvs_dir", TL_CLI_VALUE},
    [F_NOSUM] = {"--disable_kernel_summary", TL_CLI_FLAG},
    [F_DETAILS] = {"--kernel_details", TL_CLI_FLAG},
    [F_SHORT] = {"--short_kernel_study", TL_CLI_FLAG},
    [F_THRESH] = {"--short_kernel_threshold_us", TL_CLI_VALUE},
    [F_BINS] = {"--short_kernel_histogram_bins", TL_CLI_VALUE},
    [F_TOPK] = {"--topk_kernels", TL_CLI_VALUE},
    [F_REF] = {"--reference-units", TL_CLI_FLAG},
    [F_DB] = {"--db", TL_CLI_VALUE},
    [F_HELP] = {"-h|--help", TL_CLI_FLAG},
    [F_SUMMARY] = {"--summary", TL_CLI_FLAG},
    [F_HTML] = {"--html", TL_CLI_VALUE},
};

static int usage_error(const char *prog, const char *fmt, const char *arg)
{
    fprintf(stderr, "usage: %s --profile_json_path PATH [options] (see --help)\n%s: error: ", prog, prog);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return TL_EXIT_USAGE;
}

static int parse_long(const char *s, long long *v)
{
    char *end;
    errno = 0;
    while (*s == ' ') s++;
    *v = strtoll(s, &end, 10);
    while (*end == ' ') end++;
    return errno || end == s || *end;
}

/* Once per user, on a terminal: why these numbers are 1000 times smaller
 * than the reference tool's. Marked done by an empty file under
 * $XDG_STATE_HOME/tracelens (~/.local/state/tracelens); a marker that
 * cannot be written just means the note shows again. */
static void units_note(void)
{
    if (!isatty(2)) return;
    char dir[4096], mark[4200];
    if (tl_env.xdg_state_home) snprintf(dir, sizeof dir, "%s/tracelens", tl_env.xdg_state_home);
    else if (tl_env.home) snprintf(dir, sizeof dir, "%s/.local/state/tracelens", tl_env.home);
    else return;
    snprintf(mark, sizeof mark, "%s/rocprof-units-noted", dir);
    if (access(mark, F_OK) == 0) return;
    fputs("note: times here are in the units their columns name (µs, ms). The reference tool's\n"
          "      rocprofv3 report shows nanoseconds under µs labels, so its numbers are 1000x\n"
          "      ours; --reference-units reproduces them exactly. (Shown once.)\n",
          stderr);
    tl_err err = {0};
    tl_mkdir_p(dir, &err);
    FILE *f = fopen(mark, "w");
    if (f) fclose(f);
}

/* §1.8: x_results.json -> x_perf_report.xlsx; otherwise cut at the last
 * ".json" (x_results.json.gz -> x_results_perf_report.xlsx). */
static char *default_xlsx(const char *in)
{
    size_t n = strlen(in);
    static const char suf[] = "_results.json";
    size_t cut = n;
    if (n >= sizeof suf - 1 && !strcmp(in + n - (sizeof suf - 1), suf)) {
        cut = n - (sizeof suf - 1);
    } else {
        for (size_t i = n; i >= 5; i--)
            if (!strncmp(in + i - 5, ".json", 5)) {
                cut = i - 5;
                break;
            }
    }
    char *out = tl_xmalloc(cut + 32);
    memcpy(out, in, cut);
    strcpy(out + cut, "_perf_report.xlsx");
    return out;
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Checks the content before ingesting, so that a non-rocprof file fails
 * like the reference's loader instead of landing in the store as another
 * format. zlib's gzread reads the head of plain and gzip files alike and
 * inflates only what it returns (the ingest source would inflate a whole
 * 4 MB block first). */
static int check_rocprof(const char *path, tl_err *err)
{
    gzFile gz = gzopen(path, "rb");
    if (!gz) return tl_errf(err, TL_EIO, "%s: %s", path, strerror(errno));
    char head[4096];
    int n = gzread(gz, head, sizeof head);
    gzclose(gz);
    if (n < 0) return tl_errf(err, TL_EFORMAT, "%s: corrupt gzip data", path);
    if (tl_rocprof_sniff(head, (size_t)n)) return 0;
    int i = 0;
    while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) i++;
    const char *what = n == 0 ? "empty" : head[i] == '{' ? "JSON without it (a PyTorch/Kineto trace?)" : "not JSON";
    return tl_errf(err, TL_EFORMAT, "Not a valid rocprofv3 file: missing 'rocprofiler-sdk-tool' key (%s is %s)",
                   path, what);
}

/* What the report found, on stderr as the reference prints it. */
static void print_counts(const tl_rocprof_result *res, const tl_rocprof_opts *o)
{
    fprintf(stderr, "Found %llu kernel dispatches\n", (unsigned long long)res->n_kernels);
    fprintf(stderr, "Found %llu memory operations\n", (unsigned long long)res->n_memcpy);
    fprintf(stderr, "Found %llu API calls\n", (unsigned long long)res->n_api);
    fprintf(stderr, "PID: %lld, Hostname: %s\n", (long long)res->pid, res->hostname);
    if (res->warnings) fprintf(stderr, "warning: %s", res->warnings);
    if (!res->n_kernels) fprintf(stderr, "warning: No kernel events found in rocprof data\n");
    if (o->short_kernel_study && !res->n_short)
        fprintf(stderr, "No kernels found with duration < %g %s\n", o->short_threshold,
                o->reference_units ? "(ns; the reference labels it µs)" : "µs");
    for (size_t i = 0; i < res->nsheets; i++)
        fprintf(stderr, "  %s: %zu rows\n", res->sheets[i]->name, res->sheets[i]->nrows);
}

int tl_cmd_report_rocprof(int argc, char **argv)
{
    const char *prog = argc > 0 ? argv[0] : "TraceLens_generate_perf_report_rocprof";
    if (strrchr(prog, '/')) prog = strrchr(prog, '/') + 1; /* as argparse's prog */
    const char *val[F_N] = {0};
    int set[F_N] = {0};
    const char *positional = NULL;
    tl_cli_args p;
    tl_cli_args_init(&p, argc, argv, FLAGS, F_N);
    for (int f; (f = tl_cli_next(&p)) != TL_CLI_END;) {
        if (f == TL_CLI_POSITIONAL) {
            if (positional) return usage_error(prog, "unrecognized arguments: %s", p.arg);
            positional = p.arg;
            continue;
        }
        if (f == TL_CLI_BAD) return usage_error(prog, "%s", p.msg);
        if (f < 0)
            return usage_error(prog, "unrecognized argument %s (not supported by this command; see --help)", p.arg);
        if (f == F_HELP) {
            fputs(HELP, stdout);
            return 0;
        }
        set[f] = 1;
        val[f] = p.val;
    }

    tl_rocprof_opts o;
    tl_rocprof_opts_default(&o);
    o.reference_units = set[F_REF];
    o.kernel_summary = !set[F_NOSUM];
    o.kernel_details = set[F_DETAILS];
    o.short_kernel_study = set[F_SHORT];
    long long v;
    if (set[F_THRESH]) {
        /* The reference takes an int; a decimal number of µs is accepted too. */
        char *end;
        errno = 0;
        o.short_threshold = strtod(val[F_THRESH], &end);
        if (errno || end == val[F_THRESH] || *end || !isfinite(o.short_threshold))
            return usage_error(prog, "argument --short_kernel_threshold_us: invalid number: '%s'", val[F_THRESH]);
    }
    if (set[F_BINS]) {
        if (parse_long(val[F_BINS], &v))
            return usage_error(prog, "argument --short_kernel_histogram_bins: invalid int value: '%s'", val[F_BINS]);
        if (v < 1)
            return usage_error(prog, "argument --short_kernel_histogram_bins: must be at least 1, got '%s'",
                               val[F_BINS]);
        o.hist_bins = (long)v;
    }
    if (set[F_TOPK]) {
        if (parse_long(val[F_TOPK], &v))
            return usage_error(prog, "argument --topk_kernels: invalid int value: '%s'", val[F_TOPK]);
        o.has_topk = 1;
        o.topk = v;
    }

    const char *input = val[F_PATH];
    if (input && positional)
        return usage_error(prog, "give the trace either as --profile_json_path or as ID|FILE, not both (%s)",
                           positional);
    int by_flag = input != NULL;
    if (!input) input = positional;
    if (!input) return usage_error(prog, "the following arguments are required: %s", "--profile_json_path");
    int file = is_file(input);
    if (by_flag && !file) {
        fprintf(stderr, "Input file not found: %s\n", input);
        return TL_EXIT_FAIL;
    }

    tl_store *s = tl_cli_store_for(val[F_DB], &input, 1);
    if (!s) return TL_EXIT_STORE;
    int rc = TL_EXIT_OK;
    tl_err err = {0};
    tl_reader *r = NULL;
    tl_trace *t = NULL;
    tl_rocprof_result res;
    memset(&res, 0, sizeof res);
    char *xlsx = NULL;
    uint64_t id = 0;

    if (file) {
        tl_ingest_opts io = {.progress = 1, .rank = -1};
        tl_cli_ingest_env(&io);
        tl_ingest_result ir;
        if (check_rocprof(input, &err) || tl_ingest_file(s, input, &io, &ir, &err)) {
            fprintf(stderr, "Error loading rocprof data: %s\n", err.msg);
            rc = TL_EXIT_FAIL;
            goto out;
        }
        id = ir.id;
        if ((rc = tl_reader_open(s, &r, &err)) != 0) {
            fprintf(stderr, "tracelens: %s\n", err.msg);
            rc = TL_EXIT_STORE;
            goto out;
        }
    } else if ((rc = tl_cli_open_trace(s, input, &r, &id)) != TL_EXIT_OK) {
        goto out;
    }
    if (tl_trace_load(r, id, &t, &err)) {
        fprintf(stderr, "Error loading rocprof data: %s\n", err.msg);
        rc = tl_cli_exit_for(err.code, TL_EXIT_FAIL);
        goto out;
    }
    if (tl_rocprof_report(t, &o, &res, &err)) {
        fprintf(stderr, "Error generating report: %s\n", err.msg);
        rc = err.code == TL_EUSAGE ? TL_EXIT_USAGE : TL_EXIT_FAIL;
        goto out;
    }
    print_counts(&res, &o);

    if (!o.reference_units) units_note();
    /* --summary (tracelens report without an output flag): the terminal
     * view instead of files */
    if (set[F_SUMMARY] && !val[F_CSV] && !val[F_XLSX] && !val[F_HTML]) {
        static const char *const show[] = {"gpu_timeline", "kernel_summary_by_category", "kernel_summary", NULL};
        tl_cli_print_summary("rocprofv3 report", id, input, res.sheets, res.nsheets, show);
        goto out;
    }
    if (val[F_HTML] && (rc = tl_cli_write_html(res.sheets, res.nsheets, val[F_HTML], input)) != TL_EXIT_OK) goto out;
    if (val[F_HTML] && !val[F_CSV] && !val[F_XLSX]) goto out;
    /* CSVs replace the workbook when a directory is given (as the reference). */
    const char *csv = val[F_CSV];
    if (!csv) {
        if (val[F_XLSX]) {
            xlsx = tl_xstrdup(val[F_XLSX]);
        } else if (file) {
            xlsx = default_xlsx(input);
        } else {
            char hex[17];
            tl_id_format(id, hex);
            xlsx = tl_xmalloc(48);
            snprintf(xlsx, 48, "%s_perf_report.xlsx", hex);
        }
    }
    rc = tl_cli_write_sheets(res.sheets, res.nsheets, csv, xlsx, 0);
    if (rc == TL_EXIT_OK) fprintf(stderr, "Report written to %s\n", csv ? csv : xlsx);

out:
    tl_rocprof_result_free(&res);
    if (t) tl_trace_free(t);
    if (r) tl_reader_close(r);
    tl_store_close(s);
    free(xlsx);
    return rc;
}
