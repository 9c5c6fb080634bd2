/* cmd_compare.c — `TraceLens_compare_perf_reports_pytorch` (the reference
 * command, same arguments) and `tracelens compare`: loads each input as a
 * report (a workbook or a folder of report CSVs, ours or the reference
 * tool's) or, beyond the reference, as a trace (stored id or trace file)
 * whose PyTorch report is computed from the store on the fly; runs
 * query/compare and writes the workbook and/or the CSVs. No analysis here. */
#include "tools/cli.h"
#include "query/diff/diff.h"
#include "query/pytorch/pytorch.h"
#include "query/core/trace.h"
#include "report/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *HELP =
    "usage: TraceLens_compare_perf_reports_pytorch REPORT REPORT [REPORT ...]\n"
    "                 [-o OUTPUT] [--output_csvs_dir DIR] [--names NAME ...]\n"
    "                 [--sheets {gpu_timeline,ops_summary,kernel_summary,ops_all,roofline,all} ...]\n"
    "       tracelens compare [--db DIR] INPUT INPUT [INPUT ...] [same options]\n"
    "\n"
    "Compares performance reports side by side; the first is the baseline.\n"
    "Each INPUT is a report workbook (.xlsx) or a folder of report CSVs (ours or\n"
    "the reference tool's) or, beyond the reference tool, a trace: a stored trace\n"
    "id (or unique prefix) or a trace file, whose PyTorch report (with the kernel\n"
    "summary) is computed from the store on the fly.\n"
    "\n"
    "Per sheet group the reports are joined on the group's keys (gpu_timeline:\n"
    "type; ops_summary: name; kernel_summary: Kernel name; ops_unique_args,\n"
    "unified_perf_summary, ops_all: name and the four argument columns; roofline\n"
    "sheets: name and the param: columns all reports have); every other column is\n"
    "prefixed with the report's tag and <metric>__<tag>_diff / _pct columns are\n"
    "added. Per-op sheets are split into <sheet>_intersect_<tag>,\n"
    "<sheet>_only_baseline_<tag> and <sheet>_only_variant_<tag>.\n"
    "\n"
    "options:\n"
    "  -o, --output PATH      workbook to write (default comparison.xlsx); sheet\n"
    "                         names are cut to Excel's 31 characters and made\n"
    "                         unique (a clash gets _2, ... instead of overwriting)\n"
    "  --output_csvs_dir DIR  also write every sheet as DIR/<full sheet name>.csv\n"
    "  --html PATH            also one self-contained page: the reports side by side\n"
    "  --names NAME ...       one tag per input (default: file or folder name\n"
    "                         without its extension; for a trace id, the id given)\n"
    "  --sheets GROUP ...     gpu_timeline ops_summary kernel_summary ops_all\n"
    "                         roofline all (default all)\n"
    "  --exact-floats         read CSV numbers correctly rounded; by default they\n"
    "                         are read as pandas' read_csv does (its parser can be\n"
    "                         one bit off), so the output matches the reference's\n"
    "  --db DIR               trace store for trace inputs (default $TRACELENS_DB,\n"
    "                         else $XDG_DATA_HOME/tracelens)\n"
    "  -h, --help             this text\n"
    "\n"
    "Long options may be abbreviated to a unique prefix, as with the reference.\n"
    "exit status: 0 ok; 1 an input could not be read or compared, or an output\n"
    "not written; 2 bad command line; 3 store error; 4 no such trace.\n";

enum { O_OUT, O_CSV, O_NAMES, O_SHEETS, O_DB, O_EXACT, O_HELP, O_HTML };
static const tl_cli_opt OPTS[] = {
    [O_OUT] = {"-o|--output", TL_CLI_VALUE},
    [O_CSV] = {"--output_csvs_dir", TL_CLI_VALUE},
    [O_NAMES] = {"--names", TL_CLI_VALUES},
    [O_SHEETS] = {"--sheets", TL_CLI_VALUES},
    [O_DB] = {"--db", TL_CLI_VALUE},
    [O_EXACT] = {"--exact-floats", TL_CLI_FLAG},
    [O_HELP] = {"-h|--help", TL_CLI_FLAG},
    [O_HTML] = {"--html", TL_CLI_VALUE},
};

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcasecmp(s + n - m, suf) == 0;
}

/* Default tag: base name without its last extension (a folder keeps its name). */
static char *default_tag(const char *path, int dir)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--;
    size_t b = n;
    while (b > 0 && path[b - 1] != '/') b--;
    char *t = tl_xstrndup(path + b, n - b);
    if (!dir) {
        char *dot = strrchr(t, '.');
        if (dot && dot != t) *dot = 0;
    }
    return t;
}

/* Our computed sheets go through CSV text and back, so that their cells are
 * typed exactly as a report read from files (pandas' read_csv rules). */
static int retype(tl_table *in, tl_table **out, tl_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    if (!fp) return tl_errf(err, TL_ENOMEM, "open_memstream: %s", strerror(errno));
    int rc = tl_report_csv_write_fp(in, fp, err);
    fclose(fp);
    if (!rc) rc = tl_report_csv_read_mem(buf, len, in->name, 0, out, err);
    free(buf);
    return rc;
}

/* pandas' read_csv parses floats with its own precise_xstrtod: up to 17
 * significant digits accumulated in a double, then scaled by a power of
 * ten. It is not correctly rounded (31.905483154296874 reads as
 * 31.905483154296878), and the reference's comparison CSVs carry those
 * last-bit differences. Our reader rounds correctly; for a CSV folder the
 * compare command re-reads every float as pandas would, from its shortest
 * repr (the text pandas itself wrote), so that our CSVs match the
 * reference's byte for byte. --exact-floats keeps the correctly rounded
 * values. */
static double pd_xstrtod(const char *p)
{
    static double e[309];
    if (e[0] == 0) {
        for (int i = 0; i < 309; i++) {
            char b[8];
            snprintf(b, sizeof b, "1e%d", i);
            e[i] = strtod(b, NULL);
        }
    }
    int neg = 0, nd = 0, ndec = 0, exponent = 0;
    double number = 0;
    if (*p == '-' || *p == '+') neg = *p++ == '-';
    for (; *p >= '0' && *p <= '9'; p++) {
        if (nd < 17) { number = number * 10. + (*p - '0'); nd++; }
        else exponent++;
    }
    if (*p == '.') {
        p++;
        for (; nd < 17 && *p >= '0' && *p <= '9'; p++) { number = number * 10. + (*p - '0'); nd++; ndec++; }
        while (*p >= '0' && *p <= '9') p++;
        exponent -= ndec;
    }
    if (neg) number = -number;
    if (*p == 'e' || *p == 'E') {
        int en = 0, eneg = 0, ed = 0;
        p++;
        if (*p == '-' || *p == '+') eneg = *p++ == '-';
        for (; ed < 17 && *p >= '0' && *p <= '9'; p++, ed++) en = en * 10 + (*p - '0');
        exponent += eneg ? -en : en;
    }
    if (exponent > 308) return number * INFINITY;
    if (exponent > 0) return number * e[exponent];
    if (exponent < -308) return exponent < -616 ? 0.0 : number / e[-308 - exponent] / e[308];
    return number / e[-exponent];
}

static void pandas_floats(tl_report_tables *sheets)
{
    char txt[40];
    for (size_t s = 0; s < sheets->n; s++) {
        tl_table *t = sheets->v[s];
        for (size_t c = 0; c < t->ncols; c++) {
            if (t->cols[c].type != TL_F64) continue;
            for (size_t r = 0; r < t->nrows; r++) {
                double x = t->cols[c].v.f[r];
                if (isnan(x) || isinf(x)) continue;
                tl_fmt_pyfloat(x, txt);
                t->cols[c].v.f[r] = pd_xstrtod(txt);
            }
        }
    }
}

typedef struct input {
    const char *arg;
    char *tag;
    int dir;
    tl_report_tables sheets;
} input;

static int load_trace_report(tl_store **store, const char *db, input *in)
{
    /* a stored id needs a store; only a file to ingest creates one */
    if (!*store && !(*store = tl_cli_store_for(db, &in->arg, 1))) return TL_EXIT_STORE;
    tl_reader *r = NULL;
    uint64_t id;
    int code = tl_cli_open_trace(*store, in->arg, &r, &id);
    if (code) return code;
    tl_trace *t = NULL;
    tl_err err = {0};
    tl_pyt_sheets sh = {0};
    if (tl_trace_load(r, id, &t, &err)) {
        fprintf(stderr, "tracelens compare: %s: %s\n", in->arg, err.msg);
        tl_reader_close(r);
        return tl_cli_exit_for(err.code, TL_EXIT_FAIL);
    }
    tl_pyt_opts o;
    tl_pyt_opts_default(&o);
    o.kernel_summary = 1;
    o.quiet = 1;
    o.timing = tl_env.timing;
    o.serial = tl_env.report_serial;
    code = TL_EXIT_OK;
    if (tl_pytorch_report(t, &o, &sh, &err)) {
        fprintf(stderr, "tracelens compare: %s: %s\n", in->arg, err.msg);
        code = TL_EXIT_FAIL;
    }
    for (size_t i = 0; i < sh.n && !code; i++) {
        tl_table *x;
        if (retype(sh.v[i], &x, &err)) {
            fprintf(stderr, "tracelens compare: %s: %s\n", in->arg, err.msg);
            code = TL_EXIT_FAIL;
        } else tl_vec_push(&in->sheets, x);
    }
    tl_pyt_sheets_free(&sh);
    tl_trace_free(t);
    tl_reader_close(r);
    return code;
}

int tl_cmd_compare(int argc, char **argv)
{
    const char *out = "comparison.xlsx", *csv_dir = NULL, *db = NULL, *html = NULL;
    TL_VEC(const char *) pos = {0};
    TL_VEC(const char *) names = {0};
    unsigned groups = 0;
    int names_given = 0, exact = 0, code = TL_EXIT_OK;
    tl_cli_args p;
    tl_cli_args_init(&p, argc, argv, OPTS, sizeof OPTS / sizeof *OPTS);
    for (int o; (o = tl_cli_next(&p)) != TL_CLI_END;) {
        if (o == TL_CLI_POSITIONAL) { tl_vec_push(&pos, p.arg); continue; }
        if (o == TL_CLI_BAD) { fprintf(stderr, "%s: %s\n", argv[0], p.msg); code = TL_EXIT_USAGE; goto done; }
        if (o < 0) { fprintf(stderr, "%s: unrecognized argument %s%s (see --help)\n", argv[0], p.arg, tl_cli_hint(&p)); code = TL_EXIT_USAGE; goto done; }
        if (o == O_HELP) { fputs(HELP, stdout); goto done; }
        if (o == O_EXACT) { exact = 1; continue; }
        if (o == O_NAMES || o == O_SHEETS) {
            size_t nv = tl_cli_nvalues(&p);
            if (!nv) {
                fprintf(stderr, "%s: %s expects at least one argument\n", argv[0], p.name);
                code = TL_EXIT_USAGE;
            }
            for (size_t k = 0; k < nv && !code; k++) {
                const char *val = tl_cli_value(&p, k);
                if (o == O_NAMES) { tl_vec_push(&names, val); continue; }
                unsigned g = tl_compare_group(val);
                if (!g) {
                    fprintf(stderr, "%s: --sheets: invalid choice '%s' (choose from gpu_timeline, ops_summary, "
                            "kernel_summary, ops_all, roofline, all)\n", argv[0], val);
                    code = TL_EXIT_USAGE;
                }
                groups |= g;
            }
            if (code) goto done;
            if (o == O_NAMES) names_given = 1;
            continue;
        }
        if (o == O_OUT) out = p.val;
        else if (o == O_CSV) csv_dir = p.val;
        else if (o == O_HTML) html = p.val;
        else if (o == O_DB) db = p.val;
    }
    if (!groups) groups = TL_CMP_ALL;
    if (pos.n < 2) { fprintf(stderr, "%s: Need at least two report files\n", argv[0]); code = TL_EXIT_USAGE; goto done; }
    if (names_given && names.n != pos.n) {
        fprintf(stderr, "%s: --names count must equal number of reports\n", argv[0]);
        code = TL_EXIT_USAGE;
        goto done;
    }

    input *in = tl_xcalloc(pos.n, sizeof *in);
    tl_store *store = NULL;
    tl_err err = {0};
    for (size_t k = 0; k < pos.n && !code; k++) {
        in[k].arg = pos.v[k];
        in[k].dir = is_dir(pos.v[k]);
        in[k].tag = names_given ? tl_xstrdup(names.v[k]) : default_tag(pos.v[k], in[k].dir);
        if (in[k].dir || (is_file(pos.v[k]) && has_suffix(pos.v[k], ".xlsx"))) {
            if (tl_report_read(pos.v[k], 0, &in[k].sheets, &err)) {
                fprintf(stderr, "%s: %s\n", argv[0], err.msg);
                code = TL_EXIT_FAIL;
            } else if (in[k].dir && !exact) {
                pandas_floats(&in[k].sheets);
            }
        } else if (!is_file(pos.v[k]) && has_suffix(pos.v[k], ".xlsx")) {
            fprintf(stderr, "%s: %s: no such file\n", argv[0], pos.v[k]);
            code = TL_EXIT_FAIL;
        } else {
            code = load_trace_report(&store, db, &in[k]);
        }
    }
    tl_cmp_sheets res = {0};
    if (!code) {
        tl_cmp_report *R = tl_xcalloc(pos.n, sizeof *R);
        for (size_t k = 0; k < pos.n; k++) {
            R[k].tag = in[k].tag;
            R[k].path = in[k].arg;
            R[k].is_dir = in[k].dir;
            R[k].sheets = in[k].sheets.v;
            R[k].nsheets = in[k].sheets.n;
        }
        if (tl_compare_reports(R, pos.n, groups, stdout, &res, &err)) {
            fprintf(stderr, "%s: %s\n", argv[0], err.msg);
            code = TL_EXIT_FAIL;
        }
        free(R);
    }
    if (!code && out) {
        tl_xlsx *x;
        char *dir = tl_xstrdup(out), *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
            *slash = 0;
            tl_mkdir_p(dir, &err); /* a failure shows when the workbook is opened */
        }
        free(dir);
        tl_xlsx_opts xo = {.charts = 1};
        if (tl_report_xlsx_open(out, &xo, &x, &err)) {
            fprintf(stderr, "%s: %s\n", argv[0], err.msg);
            code = TL_EXIT_FAIL;
        } else {
            for (size_t i = 0; i < res.n && !code; i++) {
                const char *sn = NULL;
                if (tl_report_xlsx_add_table(x, res.v[i], &sn, &err)) {
                    fprintf(stderr, "%s: %s\n", argv[0], err.msg);
                    code = TL_EXIT_FAIL;
                    break;
                }
                if (!res.v[i]->nrows) printf("Sheet '%s' is empty (no matching rows)\n", sn ? sn : res.v[i]->name);
                else printf("Wrote sheet '%s' with %zu rows \xc3\x97 %zu columns\n", sn ? sn : res.v[i]->name,
                            res.v[i]->nrows, res.v[i]->ncols);
            }
            if (!code && tl_report_xlsx_add_overview(x, res.v, res.n, &err)) {
                fprintf(stderr, "%s: %s\n", argv[0], err.msg);
                code = TL_EXIT_FAIL;
            }
            if (code) tl_report_xlsx_discard(x);
            else if (tl_report_xlsx_close(x, &err)) {
                fprintf(stderr, "%s: %s\n", argv[0], err.msg);
                code = TL_EXIT_FAIL;
            } else printf("Comparison written to %s\n", out);
        }
    }
    if (!code && csv_dir) {
        if (tl_report_csv_write_dir(res.v, res.n, csv_dir, &err)) {
            fprintf(stderr, "%s: %s\n", argv[0], err.msg);
            code = TL_EXIT_FAIL;
        } else
            for (size_t i = 0; i < res.n; i++)
                printf("Wrote '%s.csv' with %zu rows \xc3\x97 %zu columns\n", res.v[i]->name, res.v[i]->nrows,
                       res.v[i]->ncols);
    }
    if (!code && html) code = tl_cli_write_html(res.v, res.n, html, "comparison");
    tl_cmp_sheets_free(&res);
    for (size_t k = 0; k < pos.n; k++) {
        free(in[k].tag);
        tl_report_tables_free(&in[k].sheets);
    }
    free(in);
    if (store) tl_store_close(store);
done:
    tl_vec_free(&pos);
    tl_vec_free(&names);
    return code;
}
