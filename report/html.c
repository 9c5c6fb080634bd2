/* html.c — a report as one self-contained HTML page: inline CSS and SVG,
 * no script, no fetched resource, so it can be mailed or attached to a
 * ticket and opened anywhere. The page shows what a reader looks for
 * first, drawn from the sheets it recognises by name — the GPU time split
 * with idle, op categories, top ops and kernels, the roofline, the
 * short-kernel histogram, per-rank bars — then every sheet as a table
 * (long ones folded). Numbers are shown with 3 decimals at most; the
 * exact values are in the CSV/xlsx outputs. */
#include "report/report.h"
#include "report/html_svg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *CSS =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}"
    ".sub{color:#666;margin-bottom:16px}nav a{margin-right:12px}"
    "table{border-collapse:collapse;font-size:12px;margin:6px 0}"
    "th,td{border:1px solid #ddd;padding:2px 6px;max-width:420px;overflow:hidden;text-overflow:ellipsis;"
    "white-space:nowrap}th{background:#f3f3f3;position:sticky;top:0}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums}"
    "svg{display:block;margin:8px 0;max-width:100%;height:auto}svg text{font:12px system-ui,sans-serif}"
    "svg .title{font-weight:600;font-size:13px}svg .grid{stroke:#e4e4e4}svg .roof{fill:none;stroke:#c00;"
    "stroke-width:2}svg .plabel{font-size:10px;fill:#333}svg .tick{fill:#666;font-size:11px}"
    "details{margin:4px 0}summary{cursor:pointer;color:#2a5db0}";

/* Table cells as text for the page: numbers shortened, text as is. */
static void cell(tl_buf *b, const tl_table *t, size_t c, size_t r)
{
    if (tl_table_is_missing(t, c, r)) {
        tl_buf_puts(b, "<td></td>");
        return;
    }
    switch (t->cols[c].type) {
    case TL_STR:
        tl_buf_puts(b, "<td title=\"");
        tl_html_esc(b, t->cols[c].v.s[r], 2000);
        tl_buf_puts(b, "\">");
        tl_html_esc(b, t->cols[c].v.s[r], 80);
        tl_buf_puts(b, "</td>");
        break;
    case TL_BOOL: tl_buf_puts(b, t->cols[c].v.b[r] ? "<td>True</td>" : "<td>False</td>"); break;
    default:
        tl_buf_puts(b, "<td class=\"n\">");
        tl_html_num(b, tl_table_num(t, c, r));
        tl_buf_puts(b, "</td>");
    }
}

static void table(tl_buf *b, const tl_table *t, size_t max_rows)
{
    size_t n = t->nrows < max_rows ? t->nrows : max_rows;
    tl_buf_puts(b, "<table><tr>");
    for (size_t c = 0; c < t->ncols; c++) {
        tl_buf_puts(b, "<th>");
        tl_html_esc(b, t->cols[c].name, 60);
        tl_buf_puts(b, "</th>");
    }
    tl_buf_puts(b, "</tr>\n");
    for (size_t r = 0; r < n; r++) {
        tl_buf_puts(b, "<tr>");
        for (size_t c = 0; c < t->ncols; c++) cell(b, t, c, r);
        tl_buf_puts(b, "</tr>\n");
    }
    tl_buf_puts(b, "</table>\n");
    if (t->nrows > n) tl_buf_printf(b, "<p>… %zu more rows (all of them are in the CSV/xlsx output)</p>\n", t->nrows - n);
}

static const tl_table *find(tl_table *const *tables, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(tables[i]->name, name)) return tables[i];
    return NULL;
}

/* Bars of column value_col against label_col for the first rows (sorted
 * by the sheet already), as many as max. */
static void bars_of(tl_buf *b, const tl_table *t, const char *label_col, const char *value_col, size_t max,
                    const char *title, const char *unit)
{
    long lc = tl_table_col(t, label_col), vc = tl_table_col(t, value_col);
    if (lc < 0 || vc < 0 || t->cols[lc].type != TL_STR || !t->nrows) return;
    size_t n = t->nrows < max ? t->nrows : max;
    const char **labels = tl_xcalloc(n, sizeof *labels);
    double *values = tl_xcalloc(n, sizeof *values);
    for (size_t r = 0; r < n; r++) {
        labels[r] = tl_table_is_missing(t, (size_t)lc, r) ? "" : t->cols[lc].v.s[r];
        values[r] = tl_table_num(t, (size_t)vc, r);
    }
    tl_html_svg_hbars(b, title, labels, values, n, unit);
    free(labels);
    free(values);
}

/* gpu_timeline: the busy parts and idle as one split bar. */
static void timeline(tl_buf *b, const tl_table *t)
{
    static const char *const parts[] = {"computation_time", "exposed_comm_time", "exposed_memcpy_time",
                                        "idle_time"};
    long tc = tl_table_col(t, "type"), vc = tl_table_col(t, "time ms");
    if (tc < 0 || vc < 0) return;
    const char *labels[4];
    double values[4];
    size_t n = 0;
    for (size_t k = 0; k < 4; k++)
        for (size_t r = 0; r < t->nrows; r++)
            if (!tl_table_is_missing(t, (size_t)tc, r) && !strcmp(t->cols[tc].v.s[r], parts[k])) {
                labels[n] = parts[k];
                values[n++] = tl_table_num(t, (size_t)vc, r);
            }
    if (n) tl_html_svg_split(b, "GPU time: busy parts and idle", labels, values, n, "ms");
}

/* A roofline sheet (FLOPS/Byte and TFLOPS/s_mean columns): its ops by
 * kernel time, the largest labelled. */
static void roofline(tl_buf *b, const tl_table *t, const tl_html_opts *o)
{
    long xc = tl_table_col(t, "FLOPS/Byte"), yc = tl_table_col(t, "TFLOPS/s_mean");
    long nc = tl_table_col(t, "name");
    if (xc < 0 || yc < 0 || nc < 0 || t->cols[nc].type != TL_STR) return;
    size_t n = 0;
    double *x = tl_xcalloc(t->nrows + 1, sizeof *x), *y = tl_xcalloc(t->nrows + 1, sizeof *y);
    const char **labels = tl_xcalloc(t->nrows + 1, sizeof *labels);
    for (size_t r = 0; r < t->nrows; r++) {
        double xv = tl_table_num(t, (size_t)xc, r), yv = tl_table_num(t, (size_t)yc, r);
        if (!(xv > 0 && yv > 0) || tl_table_is_missing(t, (size_t)nc, r)) continue;
        x[n] = xv;
        y[n] = yv;
        labels[n++] = t->cols[nc].v.s[r];
    }
    if (n) {
        char title[160];
        snprintf(title, sizeof title, "Roofline: %s (%zu ops%s%s)", t->name, n, o && o->arch_name ? ", roof: " : "",
                 o && o->arch_name ? o->arch_name : "");
        tl_html_roofline r = {title, x, y, labels, n, n < 12 ? n : 12, o ? o->mem_bw_tbs : 0, o ? o->peak_tflops : 0};
        tl_html_svg_roofline(b, &r);
    }
    free(x);
    free(y);
    free(labels);
}

static void histogram(tl_buf *b, const tl_table *t)
{
    long lc = tl_table_col(t, "bin_start"), hc = tl_table_col(t, "bin_end"), cc = tl_table_col(t, "count");
    if (lc < 0 || hc < 0 || cc < 0 || !t->nrows) return;
    double *lo = tl_xcalloc(t->nrows, sizeof *lo), *hi = tl_xcalloc(t->nrows, sizeof *hi);
    double *cnt = tl_xcalloc(t->nrows, sizeof *cnt);
    for (size_t r = 0; r < t->nrows; r++) {
        lo[r] = tl_table_num(t, (size_t)lc, r);
        hi[r] = tl_table_num(t, (size_t)hc, r);
        cnt[r] = tl_table_num(t, (size_t)cc, r);
    }
    tl_html_svg_histogram(b, "Short kernels: duration histogram", lo, hi, cnt, t->nrows, "µs");
    free(lo);
    free(hi);
    free(cnt);
}

/* Sheets with a rank column: one bar per row of their first numeric
 * column after it (per-rank times of corpora and collectives). */
static void per_rank(tl_buf *b, const tl_table *t)
{
    long rc = tl_table_col(t, "rank");
    if (rc < 0 || !t->nrows || t->nrows > 1024) return;
    long vc = -1;
    for (size_t c = 0; c < t->ncols && vc < 0; c++)
        if ((long)c != rc && (t->cols[c].type == TL_F64 || t->cols[c].type == TL_I64)) vc = (long)c;
    if (vc < 0) return;
    char **labels = tl_xcalloc(t->nrows, sizeof *labels);
    double *values = tl_xcalloc(t->nrows, sizeof *values);
    for (size_t r = 0; r < t->nrows; r++) {
        tl_buf l = {0};
        tl_buf_puts(&l, "rank ");
        tl_html_num(&l, tl_table_num(t, (size_t)rc, r));
        labels[r] = tl_xstrndup(l.p ? l.p : "", l.n);
        tl_buf_free(&l);
        values[r] = tl_table_num(t, (size_t)vc, r);
    }
    char title[200];
    snprintf(title, sizeof title, "%s: %s per rank", t->name, t->cols[vc].name);
    tl_html_svg_hbars(b, title, (const char *const *)labels, values, t->nrows, "");
    for (size_t r = 0; r < t->nrows; r++) free(labels[r]);
    free(labels);
    free(values);
}

/* The page goes to PATH.tmp, then is renamed over PATH: a reader never
 * sees half a page, and a full disk leaves the old one. */
static int write_whole(const char *path, const tl_buf *b, tl_err *err)
{
    tl_buf tmp = {0};
    tl_buf_printf(&tmp, "%s.tmp", path);
    FILE *f = fopen(tmp.p, "wb");
    if (!f) {
        int e = errno;
        tl_buf_free(&tmp);
        return tl_errf(err, TL_EIO, "%s: %s", path, strerror(e));
    }
    int bad = b->n && fwrite(b->p, 1, b->n, f) != b->n;
    bad |= fflush(f) != 0;
    int e = errno;
    bad |= fclose(f) != 0;
    if (!bad && rename(tmp.p, path) != 0) bad = 1, e = errno;
    if (bad) {
        remove(tmp.p);
        tl_buf_free(&tmp);
        return tl_errf(err, TL_EIO, "%s: %s", path, strerror(e ? e : EIO));
    }
    tl_buf_free(&tmp);
    return 0;
}

static void section(tl_buf *b, const char *id, const char *title)
{
    tl_buf_printf(b, "<h2 id=\"%s\">", id);
    tl_html_esc(b, title, 0);
    tl_buf_puts(b, "</h2>\n");
}

/* A compare workbook's sheet (columns "<tag>::<what>", one per report):
 * bars per row and report, "row (tag)", for the first max rows. */
static void side_by_side(tl_buf *b, const tl_table *t, const char *label, const char *what, size_t max,
                         const char *title, const char *unit)
{
    long lc = tl_table_col(t, label);
    size_t cols[8], nc = 0, nw = strlen(what);
    for (size_t c = 0; c < t->ncols && nc < 8; c++) {
        size_t len = strlen(t->cols[c].name);
        if (len > nw && !strcmp(t->cols[c].name + len - nw, what)) cols[nc++] = c;
    }
    if (lc < 0 || nc < 2 || t->cols[lc].type != TL_STR) return;
    size_t rows = t->nrows < max ? t->nrows : max, n = rows * nc;
    char **labels = tl_xcalloc(n ? n : 1, sizeof *labels);
    double *values = tl_xcalloc(n ? n : 1, sizeof *values);
    for (size_t r = 0, i = 0; r < rows; r++)
        for (size_t k = 0; k < nc; k++, i++) {
            const char *name = t->cols[cols[k]].name;
            size_t tag = strlen(name) - nw;
            tl_buf l = {0};
            tl_buf_printf(&l, "%s (%.*s)", tl_table_is_missing(t, (size_t)lc, r) ? "" : t->cols[lc].v.s[r],
                          (int)tag, name);
            labels[i] = tl_xstrndup(l.p, l.n);
            tl_buf_free(&l);
            values[i] = tl_table_num(t, cols[k], r);
        }
    tl_html_svg_hbars(b, title, (const char *const *)labels, values, n, unit);
    for (size_t i = 0; i < n; i++) free(labels[i]);
    free(labels);
    free(values);
}

/* The overview: what the recognised sheets say, in reading order. */
static void overview(tl_buf *b, tl_table *const *tables, size_t n, const tl_html_opts *o)
{
    const tl_table *t;
    if ((t = find(tables, n, "gpu_timeline"))) {
        section(b, "timeline", "GPU timeline");
        timeline(b, t);
        side_by_side(b, t, "type", "::time ms", 8, "GPU timeline per report", "ms");
        table(b, t, 20);
    }
    if ((t = find(tables, n, "ops_summary_by_category"))) {
        section(b, "categories", "Op categories");
        bars_of(b, t, "op category", "total_direct_kernel_time_ms", 20, "GPU kernel time by op category", "ms");
    }
    if ((t = find(tables, n, "ops_summary"))) {
        section(b, "ops", "Top ops");
        bars_of(b, t, "name", "total_direct_kernel_time_ms", 15, "Top ops by GPU kernel time", "ms");
        side_by_side(b, t, "name", "::total_direct_kernel_time_ms", 10, "Top ops per report: GPU kernel time",
                     "ms");
    }
    if ((t = find(tables, n, "kernel_summary"))) {
        section(b, "kernels", "Top kernels");
        bars_of(b, t, "Kernel name", "Kernel duration (µs)_sum", 15, "Top kernels by total duration", "µs");
    }
    /* one roofline of every modelled op when the report has the unified
     * sheet, else one per perf-model sheet */
    int first = 1;
    const tl_table *unified = find(tables, n, "unified_perf_summary");
    for (size_t i = 0; i < n; i++)
        if (tl_table_col(tables[i], "FLOPS/Byte") >= 0 && tl_table_col(tables[i], "TFLOPS/s_mean") >= 0 &&
            (!unified || tables[i] == unified)) {
            if (first) section(b, "roofline", "Roofline");
            first = 0;
            roofline(b, tables[i], o);
        }
    if ((t = find(tables, n, "short_kernel_histogram"))) {
        section(b, "short", "Short kernels");
        histogram(b, t);
    }
    first = 1;
    for (size_t i = 0; i < n; i++)
        if (tl_table_col(tables[i], "rank") >= 0) {
            if (first) section(b, "ranks", "Per rank");
            first = 0;
            per_rank(b, tables[i]);
        }
}

int tl_report_html_write(const char *path, tl_table *const *tables, size_t n, const tl_html_opts *o, tl_err *err)
{
    tl_buf b = {0};
    const char *title = o && o->title ? o->title : "tracelens report";
    tl_buf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<meta name=\"viewport\" content=\"width=device-width\"><title>");
    tl_html_esc(&b, title, 0);
    tl_buf_printf(&b, "</title><style>%s</style></head><body>\n<h1>", CSS);
    tl_html_esc(&b, title, 0);
    tl_buf_puts(&b, "</h1>\n<div class=\"sub\">");
    if (o && o->subtitle) tl_html_esc(&b, o->subtitle, 0);
    tl_buf_printf(&b, "%s%zu sheets</div>\n", o && o->subtitle ? " · " : "", n);
    overview(&b, tables, n, o);
    section(&b, "sheets", "Sheets");
    for (size_t i = 0; i < n; i++) {
        tl_buf_printf(&b, "<details%s><summary>", i == 0 ? " open" : "");
        tl_html_esc(&b, tables[i]->name, 0);
        tl_buf_printf(&b, " (%zu rows × %zu columns)</summary>\n", tables[i]->nrows, tables[i]->ncols);
        table(&b, tables[i], 200);
        tl_buf_puts(&b, "</details>\n");
    }
    tl_buf_puts(&b, "</body></html>\n");
    int rc = write_whole(path, &b, err);
    tl_buf_free(&b);
    return rc;
}
