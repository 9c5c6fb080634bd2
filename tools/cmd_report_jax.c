/* cmd_report_jax.c — `TraceLens_generate_perf_report_jax` (and `tracelens
 * report` on an XPlane trace): the reference tool's flags (spec formats.md
 * §2.12), same defaults and output naming. Parses arguments, ingests the
 * trace into the store when given a file, runs query/jax_report and writes
 * the sheets; no analysis here. */
#include "tools/cli.h"
#include "query/jax/jax.h"
#include "query/core/trace.h"
#include "ingest/xplane.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *HELP =
    "usage: %s --profile_path PATH.xplane.pb [options]\n"
    "       (also: tracelens report ID|FILE.xplane.pb [options])\n"
    "\n"
    "The JAX performance report of a JAX/XLA profiler trace (*.xplane.pb), as\n"
    "TraceLens_generate_perf_report_jax writes it: gpu_timeline, gpu_events_averages,\n"
    "kernel_launchers, kernel_launchers_summary, kernel_launchers_summary_by_category,\n"
    "kernel_launchers_unique_args, df_xla_perf, xla_summary and one op_<category>\n"
    "sheet per kernel category with a performance model (conv, GEMM, TE attention).\n"
    "HLO shapes come from the trace's own /host:metadata plane: no xprof needed.\n"
    "\n"
    "Options:\n"
    "  --profile_path PATH        the trace; must end with .xplane.pb (required unless\n"
    "                             a stored trace ID or file is given as argument)\n"
    "  --output_xlsx_path PATH    Excel workbook to write; default: the profile path\n"
    "                             with .xplane.pb cut off + _perf_report.xlsx\n"
    "  --output_csvs_dir DIR      write one <sheet>.csv per sheet into DIR (created)\n"
    "                             instead of the workbook\n"
    "  --kernel_metadata_keyword_filters K [K ...]\n"
    "                             keep only kernels whose HLO metadata text contains\n"
    "                             one of the keywords (kernels without HLO metadata\n"
    "                             are dropped); the GPU timeline still uses all events\n"
    "  --gpu_arch_json_path PATH  GPU arch JSON; only used by the GEMM simulation\n"
    "                             (--enable-origami), accepted and checked, no effect\n"
    "  --gpu_arch_platform NAME   bundled arch (MI300X, MI325X); same remark;\n"
    "                             mutually exclusive with --gpu_arch_json_path\n"
    "  --enable-origami           simulated GEMM times: not supported (exit 2)\n"
    "  --db DIR                   the trace store (default $TRACELENS_DB or\n"
    "                             $XDG_DATA_HOME/tracelens)\n"
    "  -h, --help                 this text\n"
    "\n"
    "Exit status: 0 ok, 1 the trace could not be read or reported, 2 bad command\n"
    "line, 3 store error, 4 no such stored trace.\n";

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

/* The --gpu_arch_* flags: at most one, an existing file or a bundled
 * platform; 0 (after saying why) when not. */
static int arch_flags_ok(const char *self, const char *arch_json, const char *arch_platform)
{
    if (arch_json && arch_platform) {
        fprintf(stderr, "%s: --gpu_arch_json_path and --gpu_arch_platform are mutually exclusive\n", self);
        return 0;
    }
    struct stat st;
    if (arch_json && (stat(arch_json, &st) || !S_ISREG(st.st_mode))) {
        fprintf(stderr, "%s: --gpu_arch_json_path: no such file: %s\n", self, arch_json);
        return 0;
    }
    if (arch_platform && strcmp(arch_platform, "MI300X") && strcmp(arch_platform, "MI325X")) {
        fprintf(stderr, "%s: --gpu_arch_platform: unknown platform '%s' (bundled: MI300X, MI325X)\n", self,
                arch_platform);
        return 0;
    }
    return 1;
}

/* A file must look like an XSpace before it goes into the store (gzip is
 * left to the ingest's sniffer); a stored id passes. Referencing the reader
 * here also links it into every tracelens binary. 0 (after saying why)
 * when not. */
static int xspace_file_ok(const char *self, const char *path)
{
    struct stat st;
    FILE *f = stat(path, &st) == 0 && S_ISREG(st.st_mode) ? fopen(path, "rb") : NULL;
    if (!f) return 1;
    char head[64];
    size_t hn = fread(head, 1, sizeof head, f);
    fclose(f);
    int gz = hn >= 2 && (unsigned char)head[0] == 0x1f && (unsigned char)head[1] == 0x8b;
    if (gz || tl_xplane_sniff(head, hn)) return 1;
    fprintf(stderr, "%s: %s: not an XSpace protobuf (*.xplane.pb): %s\n", self, path,
            hn ? "the first bytes are not an XSpace.planes field" : "empty file");
    return 0;
}

enum { J_HELP, J_PROFILE, J_XLSX, J_CSV, J_ARCH_JSON, J_ARCH_PLATFORM, J_DB, J_KEYWORDS, J_ORIGAMI, J_SUMMARY,
       J_HTML };
static const tl_cli_opt OPTS[] = {
    [J_HELP] = {"-h|--help", TL_CLI_FLAG},
    [J_PROFILE] = {"--profile_path", TL_CLI_VALUE},
    [J_XLSX] = {"--output_xlsx_path", TL_CLI_VALUE},
    [J_CSV] = {"--output_csvs_dir", TL_CLI_VALUE},
    [J_ARCH_JSON] = {"--gpu_arch_json_path", TL_CLI_VALUE},
    [J_ARCH_PLATFORM] = {"--gpu_arch_platform", TL_CLI_VALUE},
    [J_DB] = {"--db", TL_CLI_VALUE},
    [J_KEYWORDS] = {"--kernel_metadata_keyword_filters", TL_CLI_VALUES},
    [J_ORIGAMI] = {"--enable-origami|--enable_origami", TL_CLI_FLAG},
    [J_SUMMARY] = {"--summary", TL_CLI_FLAG},
    [J_HTML] = {"--html", TL_CLI_VALUE},
};

/* The terminal summary (--summary, no file asked for), or the page and the
 * workbook/CSVs; 0 or an exit code. */
static int jax_outputs(const char *self, uint64_t id, const char *trace_arg, tl_table **sheets, size_t nsheets,
                       const char *csv, const char *xlsx, const char *html, int summary)
{
    if (summary && !csv && !xlsx) {
        static const char *const show[] = {"gpu_timeline", "kernel_launchers_summary_by_category", "xla_summary",
                                           NULL};
        tl_cli_print_summary("JAX report", id, trace_arg, sheets, nsheets, show);
        return TL_EXIT_OK;
    }
    int code = TL_EXIT_OK;
    if (html && (code = tl_cli_write_html(sheets, nsheets, html, trace_arg)) != TL_EXIT_OK) return code;
    if (csv || xlsx) {
        code = tl_cli_write_sheets(sheets, nsheets, csv, xlsx, 0);
        if (!code) printf("%s: wrote %zu sheets to %s\n", self, nsheets, csv ? csv : xlsx);
    }
    return code;
}

int tl_cmd_report_jax(int argc, char **argv)
{
    const char *self = argc > 0 ? argv[0] : "TraceLens_generate_perf_report_jax";
    const char *profile = NULL, *positional = NULL, *xlsx = NULL, *csv = NULL, *db = NULL;
    const char *arch_json = NULL, *arch_platform = NULL, *html = NULL;
    int summary = 0;
    const char **kw = tl_xcalloc((size_t)argc + 1, sizeof *kw);
    size_t nkw = 0;
    int code = TL_EXIT_OK;

    tl_cli_args p;
    tl_cli_args_init(&p, argc, argv, OPTS, sizeof OPTS / sizeof *OPTS);
    for (int k; (k = tl_cli_next(&p)) != TL_CLI_END;) {
        const char *v = p.val;
        if (k == J_HELP) {
            printf(HELP, self);
            free(kw);
            return TL_EXIT_OK;
        }
        if (k == J_PROFILE) profile = v;
        else if (k == J_XLSX) xlsx = v;
        else if (k == J_CSV) csv = v;
        else if (k == J_ARCH_JSON) arch_json = v;
        else if (k == J_ARCH_PLATFORM) arch_platform = v;
        else if (k == J_DB) db = v;
        else if (k == J_SUMMARY) summary = 1;
        else if (k == J_HTML) html = v;
        else if (k == J_KEYWORDS) {
            for (size_t q = 0; q < tl_cli_nvalues(&p); q++) kw[nkw++] = tl_cli_value(&p, q);
            if (!nkw) {
                fprintf(stderr, "%s: --kernel_metadata_keyword_filters needs at least one keyword\n", self);
                free(kw);
                return TL_EXIT_USAGE;
            }
        } else if (k == J_ORIGAMI) {
            fprintf(stderr, "%s: --enable-origami (simulated GEMM times) is not supported by tracelens\n", self);
            free(kw);
            return TL_EXIT_USAGE;
        } else if (k == TL_CLI_BAD) {
            fprintf(stderr, "%s: %s\n", self, p.msg);
            free(kw);
            return TL_EXIT_USAGE;
        } else if (k == TL_CLI_UNKNOWN) {
            fprintf(stderr, "%s: unknown or unsupported option '%s'%s (see --help)\n", self, p.arg, tl_cli_hint(&p));
            free(kw);
            return TL_EXIT_USAGE;
        } else if (!positional) {
            positional = p.arg;
        } else {
            fprintf(stderr, "%s: unexpected argument '%s'\n", self, p.arg);
            free(kw);
            return TL_EXIT_USAGE;
        }
    }
    if (!profile && !positional) {
        fprintf(stderr, "%s: the following arguments are required: --profile_path\n", self);
        free(kw);
        return TL_EXIT_USAGE;
    }
    if (profile && positional) {
        fprintf(stderr, "%s: give the trace either as --profile_path or as argument, not both\n", self);
        free(kw);
        return TL_EXIT_USAGE;
    }
    if (profile && !ends_with(profile, ".xplane.pb")) {
        fprintf(stderr, "%s: --profile_path must end with .xplane.pb: %s\n", self, profile);
        free(kw);
        return TL_EXIT_USAGE;
    }
    if (!arch_flags_ok(self, arch_json, arch_platform)) {
        free(kw);
        return TL_EXIT_USAGE;
    }
    const char *trace_arg = profile ? profile : positional;

    /* Output naming: CSVs only when a directory is given (spec §0), else the
     * workbook next to the trace. */
    char *xlsx_default = NULL;
    if (csv) {
        if (xlsx) fprintf(stderr, "%s: note: --output_csvs_dir given, writing CSVs only (as the reference)\n", self);
        xlsx = NULL;
    } else if (!xlsx && (html || summary)) {
        summary = summary && !html; /* files asked for: no terminal view */
    } else if (!xlsx) {
        struct stat st;
        if (stat(trace_arg, &st) != 0) {
            fprintf(stderr, "%s: a stored trace id needs --output_xlsx_path or --output_csvs_dir\n", self);
            free(kw);
            return TL_EXIT_USAGE;
        }
        size_t n = strlen(trace_arg);
        if (ends_with(trace_arg, ".xplane.pb")) n -= strlen(".xplane.pb");
        xlsx_default = tl_xmalloc(n + 32);
        memcpy(xlsx_default, trace_arg, n);
        strcpy(xlsx_default + n, "_perf_report.xlsx");
        xlsx = xlsx_default;
    }

    if (!xspace_file_ok(self, trace_arg)) {
        free(kw);
        free(xlsx_default);
        return TL_EXIT_FAIL;
    }

    tl_store *s = tl_cli_store_for(db, &trace_arg, 1);
    if (!s) {
        free(kw);
        free(xlsx_default);
        return TL_EXIT_STORE;
    }
    tl_reader *r = NULL;
    uint64_t id = 0;
    tl_trace *t = NULL;
    tl_table **sheets = NULL;
    size_t nsheets = 0;
    tl_buf warn = {0};
    tl_err err = {0};
    code = tl_cli_open_trace(s, trace_arg, &r, &id);
    if (code) goto out;
    if (tl_trace_load(r, id, &t, &err)) {
        fprintf(stderr, "%s: %s\n", self, err.msg);
        code = tl_cli_exit_for(err.code, TL_EXIT_FAIL);
        goto out;
    }
    if (!t->format || strcmp(t->format, "xplane")) {
        fprintf(stderr, "%s: %s is a %s trace, not a JAX XPlane trace (*.xplane.pb)\n", self, trace_arg,
                t->format ? t->format : "unknown");
        code = TL_EXIT_FAIL;
        goto out;
    }
    tl_jax_opts o = {kw, nkw, trace_arg};
    if (tl_jax_report(t, &o, &sheets, &nsheets, &warn, &err)) {
        if (warn.n) fwrite(warn.p, 1, warn.n, stderr);
        fprintf(stderr, "%s: %s\n", self, err.msg);
        code = TL_EXIT_FAIL;
        goto out;
    }
    if (warn.n) fwrite(warn.p, 1, warn.n, stderr);
    code = jax_outputs(self, id, trace_arg, sheets, nsheets, csv, xlsx, html, summary);

out:
    tl_jax_sheets_free(sheets, nsheets);
    if (t) tl_trace_free(t);
    if (r) tl_reader_close(r);
    tl_store_close(s);
    tl_buf_free(&warn);
    free(kw);
    free(xlsx_default);
    return code;
}
