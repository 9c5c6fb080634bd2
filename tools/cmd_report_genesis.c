/* cmd_report_genesis.c — `TraceLens_generate_perf_report_genesis`: the
 * reference tool's report of a Genesis/Taichi capture directory (rocprofv3
 * kernel trace CSV or *_results.json, and *_results.pftrace), same flags
 * and outputs: OUT/genesis_perf_report.xlsx (the rocprofv3 report with
 * physics kernel categories and the steady-state GPU timeline, then the
 * pftrace HIP activity and memory-copy sheets) and OUT/genesis_summary.md.
 * The .pftrace is read natively. Here: the capture's files, the CSV ->
 * rocprofv3 JSON conversion, the calls and the writing; the analysis is in
 * query/rocprof and query/pftrace. */
#include "tools/cli.h"
#include "ingest/ingest.h"
#include "query/core/trace.h"
#include "query/pftrace/pftrace.h"
#include "query/rocprof/rocprof.h"
#include "report/report.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *HELP =
    "usage: TraceLens_generate_perf_report_genesis --capture-dir DIR [options]\n"
    "\n"
    "TraceLens Genesis extension: rocprof/pftrace reports for physics sim\n"
    "workloads. DIR is a capture (profile_output/<timestamp>/ of\n"
    "run_combined_trace.sh or run_profile.sh): kernel_trace/kernel_kernel_trace.csv\n"
    "(converted to rocprofv3 JSON) or *_results.json, and *_results.pftrace.\n"
    "Writes OUT/genesis_perf_report.xlsx: gpu_timeline (the steady-state window:\n"
    "dispatches after the largest gap, or the last seconds, whichever is busier),\n"
    "kernel_summary and kernel_summary_by_category with physics categories,\n"
    "short-kernel sheets, kernel_details on request, then pftrace_hip_activity_*\n"
    "and pftrace_memory_copy_* sheets; and OUT/genesis_summary.md.\n"
    "\n"
    "options (those of the reference tool, same defaults):\n"
    "  --capture-dir, --combined-run-dir DIR  the capture (required)\n"
    "  --output-dir OUT            default analysis_output\n"
    "  --include-api               put the HIP/HSA API CSVs into the converted JSON\n"
    "  --kernel-details            add kernel_details\n"
    "  --no-short-kernel-study     leave out the short-kernel sheets\n"
    "  --traceconv PATH            accepted and unused (.pftrace is read natively)\n"
    "  --steady-state-gap-ms MS    smallest gap that splits JIT/build from the\n"
    "                              simulation burst (default 1000)\n"
    "  --steady-state-fallback-s S the timed window in seconds (default: run.log's\n"
    "                              wall_time=...s times 1.05, else 5)\n"
    "  --keep-work                 keep OUT/.work (kernel_results.json)\n"
    "\n"
    "options of tracelens:\n"
    "  --output_csvs_dir DIR       also write each workbook sheet as DIR/<sheet>.csv\n"
    "  --db DIR                    the trace store (default $TRACELENS_DB, else\n"
    "                              $XDG_DATA_HOME/tracelens)\n"
    "  -h, --help                  this text\n"
    "\n"
    "exit status: 0 ok; 1 the capture could not be read or reported; 2 bad\n"
    "command line; 3 store error.\n";

enum { G_HELP, G_CAPTURE, G_OUT, G_API, G_DETAILS, G_NO_SHORT, G_TRACECONV, G_GAP, G_FALLBACK, G_KEEP, G_CSV, G_DB, G_N };
static const tl_cli_opt OPTS[G_N] = {
    [G_HELP] = {"-h|--help", TL_CLI_FLAG},
    [G_CAPTURE] = {"--capture-dir|--combined-run-dir", TL_CLI_VALUE},
    [G_OUT] = {"--output-dir", TL_CLI_VALUE},
    [G_API] = {"--include-api", TL_CLI_FLAG},
    [G_DETAILS] = {"--kernel-details", TL_CLI_FLAG},
    [G_NO_SHORT] = {"--no-short-kernel-study", TL_CLI_FLAG},
    [G_TRACECONV] = {"--traceconv", TL_CLI_VALUE},
    [G_GAP] = {"--steady-state-gap-ms", TL_CLI_VALUE},
    [G_FALLBACK] = {"--steady-state-fallback-s", TL_CLI_VALUE},
    [G_KEEP] = {"--keep-work", TL_CLI_FLAG},
    [G_CSV] = {"--output_csvs_dir", TL_CLI_VALUE},
    [G_DB] = {"--db", TL_CLI_VALUE},
};

/* What load_capture finds (paths malloc'ed, NULL when absent). */
typedef struct capture {
    char *run_dir, *rocprof_dir, *pftrace, *profile_json, *kernel_csv;
    char *manifest; /* its text */
} capture;

static void capture_free(capture *c)
{
    free(c->run_dir);
    free(c->rocprof_dir);
    free(c->pftrace);
    free(c->profile_json);
    free(c->kernel_csv);
    free(c->manifest);
}

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

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = tl_xmalloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    tl_buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) tl_buf_append(&b, chunk, n);
    fclose(f);
    tl_buf_putc(&b, '\0');
    return b.p;
}

/* The first (in name order) file of dir matching pattern, else NULL. */
static char *first_match(const char *dir, const char *pattern)
{
    DIR *d = opendir(dir);
    if (!d) return NULL;
    char *best = NULL;
    for (struct dirent *e; (e = readdir(d));) {
        if (fnmatch(pattern, e->d_name, 0) || (best && strcmp(e->d_name, best) >= 0)) continue;
        free(best);
        best = tl_xstrdup(e->d_name);
    }
    closedir(d);
    if (!best) return NULL;
    char *p = join(dir, best);
    free(best);
    return p;
}

static char *find_file(const char *const *roots, const char *pattern)
{
    for (size_t i = 0; i < 2; i++) {
        char *p = is_dir(roots[i]) ? first_match(roots[i], pattern) : NULL;
        if (p) return p;
    }
    return NULL;
}

static int load_capture(const char *dir, capture *c)
{
    memset(c, 0, sizeof *c);
    c->run_dir = realpath(dir, NULL);
    if (!c->run_dir) return -1;
    const char *manifests[] = {"capture_manifest.json", "combined_manifest.json"};
    for (size_t i = 0; i < 2 && !c->manifest; i++) {
        char *p = join(c->run_dir, manifests[i]);
        c->manifest = read_text(p);
        free(p);
    }
    c->rocprof_dir = join(c->run_dir, "kernel_trace");
    if (!is_dir(c->rocprof_dir)) {
        free(c->rocprof_dir);
        c->rocprof_dir = tl_xstrdup(c->run_dir);
    }
    const char *roots[2] = {c->rocprof_dir, c->run_dir};
    c->pftrace = find_file(roots, "*_results.pftrace");
    c->profile_json = find_file(roots, "*_results.json");
    c->kernel_csv = join(c->rocprof_dir, "kernel_kernel_trace.csv");
    if (!is_file(c->kernel_csv)) {
        free(c->kernel_csv);
        c->kernel_csv = find_file(roots, "*_kernel_trace.csv");
    }
    return 0;
}

/* ---- kernel trace CSV -> rocprofv3 JSON (convert_rocprof_csv_to_json) */

/* Column text of row r ("" when the column is absent: the caller decides). */
static const char *cell(const tl_table *t, const char *col, size_t r)
{
    long c = tl_table_col(t, col);
    return c < 0 || !t->cols[c].v.s[r] ? NULL : t->cols[c].v.s[r];
}

/* int(row[col]) (or the default for an absent column with row.get). */
static int csv_int(const tl_table *t, const char *col, size_t r, int has_default, long long *v, tl_err *err)
{
    const char *s = cell(t, col, r);
    if (!s && has_default && tl_table_col(t, col) < 0) {
        *v = 0;
        return 0;
    }
    char *end;
    errno = 0;
    *v = s ? strtoll(s, &end, 10) : 0;
    if (!s || errno || end == s || *end)
        return tl_errf(err, TL_EFORMAT, "%s: row %zu: column %s is not an integer ('%s')", t->name, r + 1, col,
                       s ? s : "");
    return 0;
}

static int read_csv(const char *path, tl_table **t, tl_err *err)
{
    return tl_report_csv_read(path, TL_READ_RAW, t, err);
}

/* One kernel_dispatch record of row r. */
static int dispatch_json(const tl_table *k, size_t r, tl_buf *o, tl_err *err)
{
    static const char *const req[] = {"Start_Timestamp", "End_Timestamp", "Dispatch_Id", "Kernel_Id",
                                      "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z", "Workgroup_Size_X",
                                      "Workgroup_Size_Y", "Workgroup_Size_Z", "LDS_Block_Size", "Scratch_Size",
                                      "VGPR_Count", "Accum_VGPR_Count", "SGPR_Count", "Correlation_Id",
                                      "Thread_Id", "Stream_Id"};
    long long v[18];
    for (size_t i = 0; i < 18; i++)
        if (csv_int(k, req[i], r, i >= 10 && i != 15 && i != 16, &v[i], err)) return err->code;
    tl_buf_printf(o,
                  "{\"start_timestamp\": %lld, \"end_timestamp\": %lld, \"dispatch_info\": {\"dispatch_id\": %lld, "
                  "\"kernel_id\": %lld, \"agent_id\": {\"handle\": 0}, \"grid_size\": {\"x\": %lld, \"y\": %lld, "
                  "\"z\": %lld}, \"workgroup_size\": {\"x\": %lld, \"y\": %lld, \"z\": %lld}, \"lds_block_size_v\": "
                  "%lld, \"scratch_size\": %lld, \"arch_vgpr_count\": %lld, \"accum_vgpr_count\": %lld, "
                  "\"sgpr_count\": %lld}, \"correlation_id\": {\"internal\": %lld}, \"thread_id\": %lld, "
                  "\"stream_id\": {\"handle\": %lld}}",
                  v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13], v[14],
                  v[15], v[16], v[17]);
    return 0;
}

static int symbols_json(const tl_table *k, tl_buf *o, tl_err *err)
{
    tl_imap seen;
    tl_imap_init(&seen, 64);
    int first = 1, rc = 0;
    for (size_t r = 0; r < k->nrows && !rc; r++) {
        long long id;
        if ((rc = csv_int(k, "Kernel_Id", r, 0, &id, err))) break;
        int isnew;
        tl_imap_put(&seen, (uint64_t)id, &isnew);
        if (!isnew) continue;
        const char *name = cell(k, "Kernel_Name", r);
        if (!name) name = "";
        tl_buf_printf(o, "%s{\"kernel_id\": %lld, \"kernel_name\": ", first ? "" : ", ", id);
        for (int f = 0; f < 3; f++) {
            static const char *const keys[] = {"", ", \"formatted_kernel_name\": ", ", \"truncated_kernel_name\": "};
            tl_buf_puts(o, keys[f]);
            tl_buf_json_str(o, name, strlen(name));
        }
        tl_buf_putc(o, '}');
        first = 0;
    }
    tl_imap_free(&seen);
    return rc;
}

static void agents_json(const char *dir, tl_buf *o)
{
    char *p = join(dir, "kernel_agent_info.csv");
    tl_table *a = NULL;
    tl_err e = {0};
    if (is_file(p) && read_csv(p, &a, &e) == 0) {
        for (size_t r = 0; r < a->nrows; r++) {
            const char *node = cell(a, "Node_Id", r);
            const char *type = cell(a, "Agent_Type", r);
            tl_buf_printf(o, "%s{\"node_id\": %lld, \"type\": ", r ? ", " : "", node ? atoll(node) : 0LL);
            const char *keys[] = {", \"name\": ", ", \"product_name\": ", ", \"vendor_name\": "};
            const char *cols[] = {"Name", "Product_Name", "Vendor_Name"};
            tl_buf_json_str(o, type ? type : "UNKNOWN", strlen(type ? type : "UNKNOWN"));
            for (size_t i = 0; i < 3; i++) {
                const char *v = cell(a, cols[i], r);
                tl_buf_puts(o, keys[i]);
                tl_buf_json_str(o, v ? v : "", strlen(v ? v : ""));
            }
            tl_buf_putc(o, '}');
        }
    }
    if (a) tl_table_free(a);
    free(p);
}

/* The hip_api / hsa_api records of an API trace CSV (none when absent). */
static int api_json(const char *dir, const char *file, tl_buf *o, tl_err *err)
{
    char *p = join(dir, file);
    tl_table *t = NULL;
    int rc = 0;
    if (is_file(p) && (rc = read_csv(p, &t, err)) == 0) {
        for (size_t r = 0; r < t->nrows && !rc; r++) {
            long long s, e, th, corr;
            if ((rc = csv_int(t, "Start_Timestamp", r, 0, &s, err)) || (rc = csv_int(t, "End_Timestamp", r, 0, &e, err)) ||
                (rc = csv_int(t, "Thread_Id", r, 0, &th, err)) || (rc = csv_int(t, "Correlation_Id", r, 0, &corr, err)))
                break;
            const char *fn = cell(t, "Function", r);
            tl_buf_printf(o, "%s{\"start_timestamp\": %lld, \"end_timestamp\": %lld, \"operation\": ", r ? ", " : "", s, e);
            tl_buf_json_str(o, fn ? fn : "", strlen(fn ? fn : ""));
            tl_buf_printf(o, ", \"thread_id\": %lld, \"correlation_id\": {\"internal\": %lld}}", th, corr);
        }
    }
    if (t) tl_table_free(t);
    free(p);
    return rc;
}

/* Writes the rocprofiler-sdk JSON of the kernel trace CSV in dir to out_path. */
static int convert_csv(const char *dir, const char *out_path, int include_api, tl_err *err)
{
    char *kpath = join(dir, "kernel_kernel_trace.csv");
    tl_table *k = NULL;
    int rc = is_file(kpath) ? read_csv(kpath, &k, err) : tl_errf(err, TL_EIO, "%s not found", kpath);
    free(kpath);
    if (rc) return rc;
    long long pid = 0, t0 = 0, t1 = 0, v;
    for (size_t r = 0; r < k->nrows && !rc; r++) {
        if ((rc = csv_int(k, "Start_Timestamp", r, 0, &v, err))) break;
        if (!r || v < t0) t0 = v;
        if ((rc = csv_int(k, "End_Timestamp", r, 0, &v, err))) break;
        if (!r || v > t1) t1 = v;
    }
    if (!rc && k->nrows) rc = csv_int(k, "Thread_Id", 0, 0, &pid, err);
    tl_buf o = {0};
    if (!rc) {
        tl_buf_printf(&o, "{\"rocprofiler-sdk-tool\": [{\"metadata\": {\"pid\": %lld, \"init_time\": %lld, "
                      "\"fini_time\": %lld, \"node\": {\"hostname\": \"genesis-benchmark\"}, \"command\": []}, "
                      "\"agents\": [", pid, t0, t1);
        agents_json(dir, &o);
        tl_buf_puts(&o, "], \"kernel_symbols\": [");
        rc = symbols_json(k, &o, err);
    }
    if (!rc) tl_buf_puts(&o, "], \"buffer_records\": {\"kernel_dispatch\": [");
    for (size_t r = 0; r < k->nrows && !rc; r++) {
        if (r) tl_buf_puts(&o, ", ");
        rc = dispatch_json(k, r, &o, err);
    }
    if (!rc) tl_buf_puts(&o, "], \"memory_copy\": [], \"hip_api\": [");
    if (!rc && include_api) rc = api_json(dir, "kernel_hip_api_trace.csv", &o, err);
    if (!rc) tl_buf_puts(&o, "], \"hsa_api\": [");
    if (!rc && include_api) rc = api_json(dir, "kernel_hsa_api_trace.csv", &o, err);
    if (!rc) {
        tl_buf_puts(&o, "]}}]}");
        FILE *f = fopen(out_path, "wb");
        if (!f || fwrite(o.p, 1, o.n, f) != o.n) rc = tl_errf(err, TL_EIO, "%s: %s", out_path, strerror(errno));
        if (f && fclose(f) && !rc) rc = tl_errf(err, TL_EIO, "%s: %s", out_path, strerror(errno));
    }
    tl_buf_free(&o);
    tl_table_free(k);
    return rc;
}

/* ---- the reports */

typedef struct genesis {
    const char *prog, *out_dir, *db;
    int include_api, kernel_details, short_study, keep_work;
    double gap_ms, fallback_s;
    int has_fallback;
    capture cap;
    char *work;
    tl_store *store;
    tl_table *rocprof[TL_ROCPROF_MAX_SHEETS];
    size_t nrocprof;
    tl_table *activity[TL_PF_ACTIVITY_MAX_SHEETS];
    size_t nactivity;
    tl_table *memcpy_sheet;
    tl_pf_steady steady;
    int has_steady;
} genesis;

/* Ingests path and loads its trace; an exit code. */
static int load_trace(genesis *g, const char *path, tl_reader **r, tl_trace **t)
{
    tl_ingest_opts io = {.progress = 1, .rank = -1};
    tl_cli_ingest_env(&io);
    tl_ingest_result ir;
    tl_err err = {0};
    if (tl_ingest_file(g->store, path, &io, &ir, &err) || tl_reader_open(g->store, r, &err) ||
        tl_trace_load(*r, ir.id, t, &err)) {
        fprintf(stderr, "%s: %s\n", g->prog, err.msg);
        return tl_cli_exit_for(err.code, TL_EXIT_FAIL);
    }
    return TL_EXIT_OK;
}

/* resolve_profile_json, then the rocprof report with the Genesis categories. */
static int rocprof_part(genesis *g)
{
    tl_err err = {0};
    char *json = NULL;
    if (g->cap.kernel_csv) {
        json = join(g->work, "kernel_results.json");
        struct stat st;
        char *dir = tl_xstrdup(g->cap.kernel_csv);
        *strrchr(dir, '/') = '\0';
        int rc = stat(json, &st) == 0 && st.st_size > 0 ? 0 : convert_csv(dir, json, g->include_api, &err);
        free(dir);
        if (rc) {
            fprintf(stderr, "%s: %s\n", g->prog, err.msg);
            free(json);
            return TL_EXIT_FAIL;
        }
    } else if (g->cap.profile_json) {
        json = tl_xstrdup(g->cap.profile_json);
    } else {
        fprintf(stderr, "%s: No kernel CSV or *_results.json found in %s\n", g->prog, g->cap.run_dir);
        return TL_EXIT_FAIL;
    }
    tl_reader *r = NULL;
    tl_trace *t = NULL;
    int code = load_trace(g, json, &r, &t);
    free(json);
    tl_rocprof_opts o;
    tl_rocprof_opts_default(&o);
    o.reference_units = 1;
    o.kernel_details = g->kernel_details;
    o.short_kernel_study = g->short_study;
    tl_rocprof_result res;
    memset(&res, 0, sizeof res);
    if (!code && tl_rocprof_report(t, &o, &res, &err)) {
        fprintf(stderr, "%s: %s\n", g->prog, err.msg);
        code = TL_EXIT_FAIL;
    }
    if (!code) {
        memcpy(g->rocprof, res.sheets, res.nsheets * sizeof *res.sheets);
        g->nrocprof = res.nsheets;
        res.nsheets = 0;
        tl_table *ks = tl_tables_find(g->rocprof, g->nrocprof, "kernel_summary");
        for (size_t i = 0; ks && i < g->nrocprof; i++)
            if (!strcmp(g->rocprof[i]->name, "kernel_summary_by_category")) {
                tl_table_free(g->rocprof[i]);
                g->rocprof[i] = tl_pf_genesis_recategorize(ks);
            }
    }
    tl_rocprof_result_free(&res);
    if (t) tl_trace_free(t);
    if (r) tl_reader_close(r);
    return code;
}

/* compute_steady_state_timeline over rocprof_dir/kernel_kernel_trace.csv,
 * replacing the rocprof gpu_timeline. */
static int steady_part(genesis *g)
{
    char *path = join(g->cap.rocprof_dir, "kernel_kernel_trace.csv");
    if (!is_file(path)) {
        free(path);
        return TL_EXIT_OK;
    }
    tl_table *k = NULL;
    tl_err err = {0};
    int rc = read_csv(path, &k, &err);
    free(path);
    int64_t *s = NULL, *e = NULL;
    if (!rc) {
        s = tl_xmalloc((k->nrows ? k->nrows : 1) * sizeof *s);
        e = tl_xmalloc((k->nrows ? k->nrows : 1) * sizeof *e);
    }
    for (size_t r = 0; !rc && r < k->nrows; r++) {
        long long a, b;
        if (!(rc = csv_int(k, "Start_Timestamp", r, 0, &a, &err)) && !(rc = csv_int(k, "End_Timestamp", r, 0, &b, &err)))
            s[r] = a, e[r] = b;
    }
    tl_table *tl = NULL;
    if (!rc)
        rc = tl_pf_genesis_steady_state(s, e, k->nrows, (int64_t)(g->gap_ms * 1e6), (int64_t)(g->fallback_s * 1e9),
                                        &tl, &g->steady, &err);
    if (!rc) {
        g->has_steady = 1;
        for (size_t i = 0; i < g->nrocprof; i++)
            if (!strcmp(g->rocprof[i]->name, "gpu_timeline")) {
                tl_table_free(g->rocprof[i]);
                g->rocprof[i] = tl;
                tl = NULL;
            }
        if (tl) tl_table_free(tl);
    } else {
        fprintf(stderr, "%s: steady-state timeline: %s\n", g->prog, err.msg);
    }
    free(s);
    free(e);
    if (k) tl_table_free(k);
    return rc ? TL_EXIT_FAIL : TL_EXIT_OK;
}

/* The HIP activity (defaults) and memory-copy reports of the .pftrace. */
static int pftrace_part(genesis *g)
{
    if (!g->cap.pftrace || !is_file(g->cap.pftrace)) return TL_EXIT_OK;
    tl_reader *r = NULL;
    tl_trace *t = NULL;
    int code = load_trace(g, g->cap.pftrace, &r, &t);
    tl_err err = {0};
    tl_pf_activity_opts o;
    tl_pf_activity_opts_default(&o);
    tl_pf_activity_result res;
    memset(&res, 0, sizeof res);
    if (!code && tl_pf_activity_report(t, &o, &res, &err)) {
        fprintf(stderr, "%s: %s\n", g->prog, err.msg);
        code = TL_EXIT_FAIL;
    }
    if (!code) {
        memcpy(g->activity, res.sheets, res.nsheets * sizeof *res.sheets);
        g->nactivity = res.nsheets;
        res.nsheets = 0;
        if (tl_pf_memory_copy_report(t, &g->memcpy_sheet, &err))
            fprintf(stderr, "%s: warning: Memory copy report skipped: %s\n", g->prog, err.msg);
    }
    tl_pf_activity_result_free(&res);
    if (t) tl_trace_free(t);
    if (r) tl_reader_close(r);
    return code;
}

/* ---- output */

/* _safe_sheet: the first 31 characters, made unique with _1, _2 ... */
static void safe_sheet(tl_table *t, const char *label, tl_smap *used, tl_arena *a)
{
    char base[64];
    snprintf(base, sizeof base, "%.31s", label);
    for (int n = 1; tl_smap_get(used, base, strlen(base)); n++) {
        char suffix[16];
        int sl = snprintf(suffix, sizeof suffix, "_%d", n);
        snprintf(base, sizeof base, "%.*s%s", 31 - sl, label, suffix);
    }
    char *name = tl_arena_strdup(a, base);
    tl_smap_put(used, name, strlen(name), NULL);
    t->name = tl_arena_strdup(&t->arena, name);
}

static int nonempty(const tl_table *t) { return t && t->nrows && t->ncols; }

/* The workbook's sheets in order, renamed as write_excel names them. */
static size_t workbook_sheets(genesis *g, tl_table **out, tl_arena *a)
{
    static const char *const keep[] = {"gpu_timeline", "kernel_summary", "kernel_summary_by_category",
                                       "short_kernels_summary", "short_kernel_histogram", "kernel_details"};
    tl_smap used;
    tl_smap_init(&used, 16);
    size_t n = 0;
    for (size_t i = 0; i < g->nrocprof; i++) {
        int kept = 0;
        for (size_t k = 0; k < 6; k++) kept |= !strcmp(g->rocprof[i]->name, keep[k]);
        if (kept && nonempty(g->rocprof[i])) out[n++] = g->rocprof[i];
    }
    for (size_t i = 0; i < n; i++) safe_sheet(out[i], out[i]->name, &used, a);
    tl_table *pf[TL_PF_ACTIVITY_MAX_SHEETS + 1];
    size_t npf = 0;
    for (size_t i = 0; i < g->nactivity; i++) pf[npf++] = g->activity[i];
    if (g->memcpy_sheet) pf[npf++] = g->memcpy_sheet;
    for (size_t i = 0; i < npf; i++) {
        if (!nonempty(pf[i])) continue;
        const char *prefix = pf[i] == g->memcpy_sheet ? "pftrace_memory_copy" : "pftrace_hip_activity";
        char label[128];
        snprintf(label, sizeof label, "%s_%s", prefix, pf[i]->name);
        safe_sheet(pf[i], label, &used, a);
        out[n++] = pf[i];
    }
    tl_smap_free(&used);
    return n;
}

/* A manifest field as Python's str() prints it (None when absent). */
static void manifest_field(const char *m, const char *key, tl_buf *o)
{
    tl_buf v = {0};
    if (tl_args_get_str(m, strlen(m), key, &v) == 0) tl_buf_append(o, v.p ? v.p : "", v.n);
    else tl_buf_puts(o, "None");
    tl_buf_free(&v);
}

/* A table as a Markdown pipe table (the first `rows` rows). */
static void md_table(tl_buf *o, const tl_table *t, size_t rows)
{
    char buf[64];
    for (size_t c = 0; c < t->ncols; c++) tl_buf_printf(o, "| %s ", t->cols[c].name);
    tl_buf_puts(o, "|\n");
    for (size_t c = 0; c < t->ncols; c++) tl_buf_puts(o, "|---");
    tl_buf_puts(o, "|");
    for (size_t r = 0; r < t->nrows && r < rows; r++) {
        tl_buf_puts(o, "\n");
        for (size_t c = 0; c < t->ncols; c++) tl_buf_printf(o, "| %s ", tl_table_cell_text(t, c, r, buf, sizeof buf));
        tl_buf_puts(o, "|");
    }
    tl_buf_puts(o, "\n\n");
}

static void md_timeline(genesis *g, tl_buf *o)
{
    tl_table *tl = tl_tables_find(g->rocprof, g->nrocprof, "gpu_timeline");
    if (!tl) return;
    const tl_pf_steady *s = &g->steady;
    char count[32], grouped[48];
    snprintf(count, sizeof count, "%lld", (long long)(g->has_steady ? s->dispatches : 0));
    size_t n = strlen(count), k = 0;
    for (size_t i = 0; i < n; i++) { /* Python's {:,} */
        if (i && (n - i) % 3 == 0) grouped[k++] = ',';
        grouped[k++] = count[i];
    }
    grouped[k] = 0;
    tl_buf_printf(o, "## GPU Timeline (timed benchmark window)\n\nSteady-state window: `%s` — %s dispatches, "
                     "**%.1f%%** GPU busy over %.1f ms\n\n> Full rocprof session idle (JIT/build) is excluded "
                     "from this report.\n\n",
                  g->has_steady ? s->method : "n/a", grouped, g->has_steady ? s->gpu_util_pct : 0.0,
                  g->has_steady ? s->window_ms : 0.0);
    for (size_t r = 0; r < tl->nrows; r++)
        tl_buf_printf(o, "- **%s**: %.2f ms (%.1f%%)\n", tl->cols[0].v.s[r], tl_table_num(tl, 1, r), tl_table_num(tl, 2, r));
    tl_buf_puts(o, "\n");
}

static void md_top_kernels(genesis *g, tl_buf *o)
{
    tl_table *ks = tl_tables_find(g->rocprof, g->nrocprof, "kernel_summary");
    if (!ks) return;
    tl_buf_puts(o, "## Top 10 Kernels\n\n| Kernel | Count | Total (ms) | % | Category |\n"
                   "|--------|-------|------------|---|----------|\n");
    long nm = tl_table_col(ks, "name"), cnt = tl_table_col(ks, "Count"), ms = tl_table_col(ks, "Total Kernel Time (ms)");
    long pct = tl_table_col(ks, "Percentage (%)"), cat = tl_table_col(ks, "Category");
    for (size_t r = 0; r < ks->nrows && r < 10 && nm >= 0 && cnt >= 0 && ms >= 0 && pct >= 0; r++) {
        const char *name = ks->cols[nm].v.s[r] ? ks->cols[nm].v.s[r] : "";
        size_t chars = 0, cut = 0;
        for (const char *p = name; *p; p++)
            if (((unsigned char)*p & 0xc0) != 0x80 && ++chars == 50) cut = (size_t)(p - name);
        tl_buf_puts(o, "| `");
        if (chars > 52) {
            tl_buf_append(o, name, cut);
            tl_buf_puts(o, "...");
        } else {
            tl_buf_puts(o, name);
        }
        tl_buf_printf(o, "` | %lld | %.1f | %.2f | %s |\n", (long long)tl_table_num(ks, (size_t)cnt, r),
                      tl_table_num(ks, (size_t)ms, r), tl_table_num(ks, (size_t)pct, r),
                      cat >= 0 && ks->cols[cat].v.s[r] ? ks->cols[cat].v.s[r] : "Other");
    }
    tl_buf_puts(o, "\n");
}

/* genesis_summary.md: the reference's sections; its tables as Markdown pipe
 * tables (the reference prints them with pandas' to_markdown). */
static int write_summary(genesis *g, const char *path)
{
    tl_buf o = {0};
    tl_buf_puts(&o, "# TraceLens Genesis Performance Report\n\nExtension report for physics-simulation workloads "
                    "(Genesis/Taichi-style kernels).\n\n");
    const char *m = g->cap.manifest;
    if (m && strchr(m, ':')) {
        const char *slash = strrchr(g->cap.run_dir, '/');
        tl_buf ts = {0};
        if (tl_args_get_str(m, strlen(m), "timestamp", &ts)) tl_buf_puts(&ts, slash ? slash + 1 : g->cap.run_dir);
        tl_buf_puts(&o, "**Capture:** ");
        tl_buf_append(&o, ts.p ? ts.p : "", ts.n);
        tl_buf_puts(&o, " — n_envs=");
        manifest_field(m, "n_envs", &o);
        tl_buf_puts(&o, ", steps=");
        manifest_field(m, "num_steps", &o);
        tl_buf_puts(&o, ", fp");
        manifest_field(m, "precision", &o);
        tl_buf_puts(&o, "\n");
        tl_buf_free(&ts);
    }
    tl_buf_puts(&o, "\n");
    md_timeline(g, &o);
    tl_table *bc = tl_tables_find(g->rocprof, g->nrocprof, "kernel_summary_by_category");
    if (nonempty(bc)) {
        tl_buf_puts(&o, "## Kernel Categories\n\n");
        md_table(&o, bc, bc->nrows);
    }
    md_top_kernels(g, &o);
    tl_table *hip = NULL;
    for (size_t i = 0; i < g->nactivity; i++)
        if (strstr(g->activity[i]->name, "hip_summar")) hip = g->activity[i];
    if (nonempty(hip)) {
        tl_buf_puts(&o, "## Top HIP API (pftrace)\n\n");
        md_table(&o, hip, 10);
    }
    while (o.n && o.p[o.n - 1] == '\n') o.n--;
    tl_buf_putc(&o, '\n'); /* "\n".join(lines), whose last line is "" */
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(o.p, 1, o.n, f) == o.n;
    if (f && fclose(f)) ok = 0;
    tl_buf_free(&o);
    if (!ok) fprintf(stderr, "%s: %s: %s\n", g->prog, path, strerror(errno));
    return ok ? TL_EXIT_OK : TL_EXIT_FAIL;
}

/* Removes the work folder (its files only: the folder holds none other). */
static void remove_work(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char *p = join(dir, e->d_name);
        unlink(p);
        free(p);
    }
    closedir(d);
    rmdir(dir);
}

/* _resolve_steady_state_fallback_s: the flag, else run.log's
 * wall_time=<s>s times 1.05, else 5. */
static double fallback_window(const genesis *g)
{
    if (g->has_fallback) return g->fallback_s;
    char *p = join(g->cap.run_dir, "run.log");
    char *text = read_text(p);
    free(p);
    double v = 5.0;
    for (const char *q = text; q && (q = strstr(q, "wall_time=")); q++) {
        const char *d = q + 10;
        size_t n = strspn(d, "0123456789.");
        if (n && d[n] == 's') {
            char num[64];
            snprintf(num, sizeof num, "%.*s", (int)(n < 63 ? n : 63), d);
            char *end;
            double w = strtod(num, &end);
            if (*end) break; /* Python's float() refuses it: the reference fails */
            v = w * 1.05;
            fprintf(stderr, "Auto-detected benchmark window %.2fs from run.log\n", v);
            break;
        }
    }
    free(text);
    return v;
}

static int parse_args(genesis *g, int argc, char **argv)
{
    tl_cli_args p;
    tl_cli_args_init(&p, argc, argv, OPTS, G_N);
    const char *capture = NULL;
    g->out_dir = "analysis_output";
    g->short_study = 1;
    g->gap_ms = 1000.0;
    for (int f; (f = tl_cli_next(&p)) != TL_CLI_END;) {
        if (f == G_HELP) {
            fputs(HELP, stdout);
            return -1;
        }
        if (f < 0) {
            if (f == TL_CLI_BAD) fprintf(stderr, "%s: error: %s\n", g->prog, p.msg);
            else fprintf(stderr, "%s: error: unrecognized arguments: %s%s\n", g->prog, p.arg,
                         f == TL_CLI_UNKNOWN ? tl_cli_hint(&p) : "");
            return TL_EXIT_USAGE;
        }
        char *end = NULL;
        switch (f) {
        case G_CAPTURE: capture = p.val; break;
        case G_OUT: g->out_dir = p.val; break;
        case G_API: g->include_api = 1; break;
        case G_DETAILS: g->kernel_details = 1; break;
        case G_NO_SHORT: g->short_study = 0; break;
        case G_KEEP: g->keep_work = 1; break;
        case G_DB: g->db = p.val; break;
        case G_GAP: g->gap_ms = strtod(p.val, &end); break;
        case G_FALLBACK: g->fallback_s = strtod(p.val, &end), g->has_fallback = 1; break;
        default: break; /* --traceconv: unused; --output_csvs_dir: read by the caller */
        }
        if (end && (end == p.val || *end)) {
            fprintf(stderr, "%s: error: argument %s: invalid float value: '%s'\n", g->prog, p.name, p.val);
            return TL_EXIT_USAGE;
        }
    }
    if (!capture) {
        fprintf(stderr, "%s: error: the following arguments are required: --capture-dir/--combined-run-dir\n", g->prog);
        return TL_EXIT_USAGE;
    }
    if (load_capture(capture, &g->cap)) {
        fprintf(stderr, "%s: %s: %s\n", g->prog, capture, strerror(errno));
        return TL_EXIT_FAIL;
    }
    return 0;
}

static const char *csv_dir_arg(int argc, char **argv)
{
    tl_cli_args p;
    tl_cli_args_init(&p, argc, argv, OPTS, G_N);
    const char *dir = NULL;
    for (int f; (f = tl_cli_next(&p)) != TL_CLI_END;)
        if (f == G_CSV) dir = p.val;
    return dir;
}

int tl_cmd_report_genesis(int argc, char **argv)
{
    genesis g;
    memset(&g, 0, sizeof g);
    g.prog = argc > 0 && strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : "TraceLens_generate_perf_report_genesis";
    int rc = parse_args(&g, argc, argv);
    if (rc) {
        capture_free(&g.cap);
        return rc < 0 ? TL_EXIT_OK : rc;
    }
    g.fallback_s = fallback_window(&g);
    char cmd_out[4096];
    snprintf(cmd_out, sizeof cmd_out, "%s", g.out_dir);
    tl_err err = {0};
    tl_arena a;
    tl_arena_init(&a, 4096);
    g.work = join(cmd_out, ".work");
    if (tl_mkdir_p(g.work, &err)) {
        fprintf(stderr, "%s: %s\n", g.prog, err.msg);
        rc = TL_EXIT_FAIL;
    }
    if (!rc && !(g.store = tl_cli_store(g.db))) rc = TL_EXIT_STORE;
    if (!rc) rc = rocprof_part(&g);
    if (!rc) rc = steady_part(&g);
    if (!rc) rc = pftrace_part(&g);
    if (!rc) {
        tl_table *sheets[TL_ROCPROF_MAX_SHEETS + TL_PF_ACTIVITY_MAX_SHEETS + 1];
        size_t n = workbook_sheets(&g, sheets, &a);
        char *xlsx = join(cmd_out, "genesis_perf_report.xlsx");
        rc = tl_cli_write_sheets(sheets, n, csv_dir_arg(argc, argv), xlsx, 0);
        char *md = join(cmd_out, "genesis_summary.md");
        if (!rc) rc = write_summary(&g, md);
        if (!rc) printf("\n=== Done ===\n  Excel   : %s\n  Summary : %s\n", xlsx, md);
        free(xlsx);
        free(md);
    }
    if (!g.keep_work && g.work) remove_work(g.work);
    for (size_t i = 0; i < g.nrocprof; i++) tl_table_free(g.rocprof[i]);
    for (size_t i = 0; i < g.nactivity; i++) tl_table_free(g.activity[i]);
    if (g.memcpy_sheet) tl_table_free(g.memcpy_sheet);
    if (g.store) tl_store_close(g.store);
    free(g.work);
    capture_free(&g.cap);
    tl_arena_free(&a);
    return rc;
}
