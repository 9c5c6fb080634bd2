/* xlsx.c — tables to an Excel workbook. A workbook opened for charts (GPU
 * timeline breakdown, time by category, roofline) is written through
 * libxlsxwriter, which draws them; every other one by our own SpreadsheetML
 * writer (xlsx_ooxml.c), 5-10x faster on large sheets. Sheet names
 * are made valid and unique here because the reference tool lets a name that
 * collides after Excel's 31-character cut overwrite an earlier sheet
 * (spec diff-compare-phases.md B5); sheets too big for Excel go to a CSV
 * beside the workbook instead of being cut. The workbook is written under a
 * temporary name and renamed on close, so a failure never leaves half a file
 * under the requested name. */
#include "report/report.h"
#include "report/xlsx_ooxml.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xlsxwriter.h>
#include "base/lazylib.h"

/* The libxlsxwriter functions this file calls, bound on first use
 * (store/lazylib.h): only workbooks with charts load the library. */
#define LXW_FUNCS(X) \
    X(chart_add_series) \
    X(chart_axis_set_log_base) \
    X(chart_axis_set_name) \
    X(chart_legend_set_position) \
    X(chart_series_set_categories) \
    X(chart_series_set_line) \
    X(chart_series_set_marker_size) \
    X(chart_series_set_marker_type) \
    X(chart_series_set_name) \
    X(chart_series_set_name_range) \
    X(chart_series_set_values) \
    X(chart_title_set_name) \
    X(format_set_bold) \
    X(lxw_strerror) \
    X(workbook_add_chart) \
    X(workbook_add_format) \
    X(workbook_add_worksheet) \
    X(workbook_close) \
    X(workbook_new_opt) \
    X(workbook_validate_sheet_name) \
    X(worksheet_freeze_panes) \
    X(worksheet_hide) \
    X(worksheet_insert_chart_opt) \
    X(worksheet_set_column_opt) \
    X(worksheet_write_boolean) \
    X(worksheet_write_number) \
    X(worksheet_write_string)
TL_LAZY_API(LX, LXW_FUNCS, TL_SONAME_XLSXWRITER, "xlsx output with charts");

#define SHEET_NAME_MAX 31
#define XLSX_STR_MAX 32767 /* characters per cell */
#define WIDTH_SCAN_ROWS 1000

typedef struct sheet_ent {
    char *table_name, *sheet_name; /* sheet_name NULL: sent to CSV */
    lxw_worksheet *ws;
    size_t nrows, ncols;
} sheet_ent;

struct tl_xlsx {
    lxw_workbook *wb; /* with charts; else ox */
    tl_ooxml *ox;
    char *path, *tmp_path;
    tl_xlsx_opts opts;
    lxw_format *bold;
    TL_VEC(sheet_ent) sheets;
    lxw_worksheet *data_ws; /* hidden sheet holding explicit chart points */
    const char *data_name;
    uint32_t data_row;
    tl_arena arena;
};

static int lxw_fail(tl_err *err, lxw_error e, const char *what)
{
    return tl_errf(err, TL_EIO, "xlsx: %s: %s", what, LX.lxw_strerror(e));
}

int tl_report_xlsx_charts_ready(tl_err *err) { return tl_lazylib_bind(&LX_lib, &LX, err); }

int tl_report_xlsx_open(const char *path, const tl_xlsx_opts *opts, tl_xlsx **out, tl_err *err)
{
    /* libxlsxwriter only touches the file at close; check the directory now
     * so a bad path fails before any work is done. */
    char *dir = tl_xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash) slash[slash == dir ? 1 : 0] = 0;
    int ok = access(slash ? dir : ".", W_OK) == 0;
    int e = errno;
    free(dir);
    if (!ok) return tl_errf(err, TL_EIO, "%s: cannot write here: %s", path, strerror(e));

    tl_xlsx *x = tl_xcalloc(1, sizeof *x);
    tl_arena_init(&x->arena, 16 * 1024);
    if (opts) x->opts = *opts;
    if (!x->opts.max_rows || x->opts.max_rows > TL_XLSX_MAX_ROWS) x->opts.max_rows = TL_XLSX_MAX_ROWS;
    x->path = tl_arena_strdup(&x->arena, path);
    x->tmp_path = tl_arena_printf(&x->arena, "%s.tmp%ld", path, (long)getpid());
    if (!x->opts.charts) {
        int rc = tl_ooxml_open(x->tmp_path, &x->ox, err);
        if (rc) {
            tl_arena_free(&x->arena);
            free(x);
        } else {
            *out = x;
        }
        return rc;
    }
    int rc = tl_report_xlsx_charts_ready(err);
    if (rc) {
        tl_arena_free(&x->arena);
        free(x);
        return rc;
    }
    lxw_workbook_options wo = {0};
    wo.constant_memory = x->opts.shared_strings ? LXW_FALSE : LXW_TRUE;
    wo.tmpdir = x->opts.tmpdir ? tl_arena_strdup(&x->arena, x->opts.tmpdir) : NULL;
    wo.use_zip64 = LXW_TRUE; /* sheets near Excel's row limit exceed 4 GiB of XML */
    x->wb = LX.workbook_new_opt(x->tmp_path, &wo);
    if (!x->wb) {
        tl_arena_free(&x->arena);
        free(x);
        return tl_errf(err, TL_ENOMEM, "%s: cannot start workbook", path);
    }
    x->bold = LX.workbook_add_format(x->wb);
    LX.format_set_bold(x->bold);
    *out = x;
    return TL_OK;
}

/* ---- sheet names */

/* Excel counts UTF-16 units; characters outside the BMP take two. */
static size_t utf8_len(unsigned char c)
{
    return c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
}

/* Cuts s (in place) to at most max Excel characters at a character boundary. */
static void cut_units(char *s, size_t max)
{
    size_t units = 0, i = 0, n = strlen(s);
    while (i < n) {
        size_t l = utf8_len((unsigned char)s[i]);
        size_t u = l == 4 ? 2 : 1;
        if (units + u > max || i + l > n) break;
        units += u;
        i += l;
    }
    s[i] = 0;
}

void tl_report_sheet_name_clean(const char *name, char out[128])
{
    size_t o = 0;
    for (const char *p = name ? name : ""; *p && o < 127; p++) {
        unsigned char c = (unsigned char)*p;
        out[o++] = (c < 0x20 || strchr("[]:*?/\\", c)) ? '_' : (char)c;
    }
    out[o] = 0;
    /* the 127-byte copy may have split a character; cut_units drops it */
    cut_units(out, SHEET_NAME_MAX);
    size_t n = strlen(out);
    if (n && out[0] == '\'') out[0] = '_';
    if (n && out[n - 1] == '\'') out[n - 1] = '_';
    if (!n) snprintf(out, 128, "Sheet");
    if (strcasecmp(out, "History") == 0) snprintf(out, 128, "History_"); /* reserved by Excel */
}

static int name_taken(const tl_xlsx *x, const char *name)
{
    for (size_t i = 0; i < x->sheets.n; i++)
        if (x->sheets.v[i].sheet_name && strcasecmp(x->sheets.v[i].sheet_name, name) == 0) return 1;
    return 0;
}

static char *unique_sheet_name(tl_xlsx *x, const char *want)
{
    char base[128], cand[160];
    tl_report_sheet_name_clean(want, base);
    if (!name_taken(x, base)) return tl_arena_strdup(&x->arena, base);
    for (unsigned k = 2;; k++) {
        char suf[16], head[128];
        int sl = snprintf(suf, sizeof suf, "_%u", k);
        memcpy(head, base, sizeof head);
        cut_units(head, SHEET_NAME_MAX - (size_t)sl);
        snprintf(cand, sizeof cand, "%s%s", head, suf);
        if (!name_taken(x, cand)) return tl_arena_strdup(&x->arena, cand);
    }
}

static sheet_ent *find_sheet(const tl_xlsx *x, const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < x->sheets.n; i++)
        if (x->sheets.v[i].sheet_name && strcmp(x->sheets.v[i].sheet_name, name) == 0) return &x->sheets.v[i];
    for (size_t i = 0; i < x->sheets.n; i++)
        if (strcmp(x->sheets.v[i].table_name, name) == 0) return &x->sheets.v[i];
    return NULL;
}

const char *tl_report_xlsx_sheet_name(const tl_xlsx *x, const char *name)
{
    const sheet_ent *s = find_sheet(x, name);
    return s ? s->sheet_name : NULL;
}

/* ---- cell text that XML can carry: invalid UTF-8 and control characters
 * (other than tab/newline/CR) would make the file unreadable. Returns s or
 * a cleaned copy in b, cut to Excel's per-cell limit. */
static const char *xml_safe(const char *s, tl_buf *b, int *cut)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, chars = 0;
    int clean = 1;
    for (; u[i]; chars++) {
        unsigned char c = u[i];
        size_t l = utf8_len(c);
        int ok = !(c < 0x20 && c != '\t' && c != '\n' && c != '\r') && !(c >= 0x80 && c < 0xc0) && c < 0xf8;
        for (size_t k = 1; ok && k < l; k++)
            if ((u[i + k] & 0xc0) != 0x80) ok = 0;
        if (!ok) {
            clean = 0;
            break;
        }
        i += l;
    }
    if (clean && chars <= XLSX_STR_MAX) return s;
    b->n = 0;
    chars = 0;
    for (i = 0; u[i] && chars < XLSX_STR_MAX; chars++) {
        unsigned char c = u[i];
        size_t l = utf8_len(c);
        int ok = !(c < 0x20 && c != '\t' && c != '\n' && c != '\r') && !(c >= 0x80 && c < 0xc0) && c < 0xf8;
        for (size_t k = 1; ok && k < l; k++)
            if ((u[i + k] & 0xc0) != 0x80) ok = 0;
        if (ok) {
            tl_buf_append(b, s + i, l);
            i += l;
        } else {
            tl_buf_puts(b, "\xef\xbf\xbd"); /* U+FFFD */
            i++;
        }
    }
    if (u[i]) *cut = 1;
    tl_buf_putc(b, 0);
    return b->p;
}

static double col_width(const tl_table *t, size_t c)
{
    size_t w = tl_report_text_width(t->cols[c].name, strlen(t->cols[c].name)) + 1; /* bold */
    size_t scan = t->nrows < WIDTH_SCAN_ROWS ? t->nrows : WIDTH_SCAN_ROWS;
    char buf[64];
    for (size_t r = 0; r < scan && w < TL_XLSX_COL_WIDTH_MAX; r++) {
        const char *s = tl_table_cell_text(t, c, r, buf, sizeof buf);
        size_t n = strlen(s);
        size_t cw = t->cols[c].type == TL_STR ? tl_report_text_width(s, n < 256 ? n : 256) : n;
        if (t->cols[c].type != TL_STR && cw > 12) cw = 12; /* Excel's General format shows ~11 digits */
        if (cw > w) w = cw;
    }
    double d = (double)w + 2;
    return d > TL_XLSX_COL_WIDTH_MAX ? TL_XLSX_COL_WIDTH_MAX : d;
}

static int write_csv_instead(tl_xlsx *x, const tl_table *t, tl_err *err)
{
    size_t pl = strlen(x->path);
    size_t stem = pl > 5 && strcasecmp(x->path + pl - 5, ".xlsx") == 0 ? pl - 5 : pl;
    tl_buf p = {0};
    tl_buf_append(&p, x->path, stem);
    tl_buf_putc(&p, '_');
    for (const char *s = t->name; *s; s++) tl_buf_putc(&p, *s == '/' ? '_' : *s);
    tl_buf_puts(&p, ".csv");
    int rc = tl_report_csv_write(t, p.p, err);
    if (rc == TL_OK)
        fprintf(stderr,
                "tracelens: sheet '%s' has %zu rows and %zu columns, more than an Excel sheet holds "
                "(%zu rows, %u columns); wrote it to %s instead of %s\n",
                t->name, t->nrows, t->ncols, x->opts.max_rows, TL_XLSX_MAX_COLS, p.p, x->path);
    tl_buf_free(&p);
    sheet_ent e = {tl_arena_strdup(&x->arena, t->name), NULL, NULL, t->nrows, t->ncols};
    if (rc == TL_OK) tl_vec_push(&x->sheets, e);
    return rc;
}

static void note_cut(const tl_xlsx *x, const char *name, int cut)
{
    if (cut && !x->opts.quiet)
        fprintf(stderr, "tracelens: sheet '%s': cells longer than %d characters were cut (Excel's limit)\n",
                name, XLSX_STR_MAX);
}

/* Records a written sheet (ws: libxlsxwriter's, NULL with our writer). */
static int sheet_done(tl_xlsx *x, const tl_table *t, char *name, lxw_worksheet *ws, int cut,
                      const char **sheet_name)
{
    note_cut(x, name, cut);
    sheet_ent e = {tl_arena_strdup(&x->arena, t->name), name, ws, t->nrows, t->ncols};
    tl_vec_push(&x->sheets, e);
    if (sheet_name) *sheet_name = name;
    return TL_OK;
}

static int add_table_ooxml(tl_xlsx *x, const tl_table *t, char *name, const char **sheet_name, tl_err *err)
{
    double *w = tl_xmalloc((t->ncols ? t->ncols : 1) * sizeof *w);
    for (size_t c = 0; c < t->ncols; c++) w[c] = col_width(t, c);
    int cut = 0;
    int rc = tl_ooxml_add_sheet(x->ox, name, t, w, xml_safe, &cut, err);
    free(w);
    return rc ? rc : sheet_done(x, t, name, NULL, cut, sheet_name);
}

int tl_report_xlsx_add_table(tl_xlsx *x, const tl_table *t, const char **sheet_name, tl_err *err)
{
    if (sheet_name) *sheet_name = NULL;
    if (t->nrows > x->opts.max_rows || t->ncols > TL_XLSX_MAX_COLS) return write_csv_instead(x, t, err);
    char *name = unique_sheet_name(x, t->name);
    char clean[128];
    tl_report_sheet_name_clean(t->name, clean);
    if (!x->opts.quiet && strcmp(clean, name) != 0)
        fprintf(stderr, "tracelens: sheet name '%s' is already used in %s; sheet '%s' is written as '%s'\n",
                clean, x->path, t->name, name);
    if (x->ox) return add_table_ooxml(x, t, name, sheet_name, err);
    lxw_error le = LX.workbook_validate_sheet_name(x->wb, name);
    if (le) return tl_errf(err, TL_EUSAGE, "xlsx: sheet name '%s': %s", name, LX.lxw_strerror(le));
    lxw_worksheet *ws = LX.workbook_add_worksheet(x->wb, name);
    if (!ws) return tl_errf(err, TL_EIO, "xlsx: cannot add sheet '%s'", name);

    for (size_t c = 0; c < t->ncols; c++) {
        lxw_row_col_options o = {0};
        o.hidden = t->cols[c].hidden ? 1 : 0;
        le = LX.worksheet_set_column_opt(ws, (lxw_col_t)c, (lxw_col_t)c, col_width(t, c), NULL, &o);
        if (le) return lxw_fail(err, le, name);
    }
    tl_buf sb = {0};
    int cut = 0;
    for (size_t c = 0; c < t->ncols; c++) {
        le = LX.worksheet_write_string(ws, 0, (lxw_col_t)c, xml_safe(t->cols[c].name, &sb, &cut), x->bold);
        if (le) goto lxw_err;
    }
    if (t->ncols) LX.worksheet_freeze_panes(ws, 1, 0);
    for (size_t r = 0; r < t->nrows; r++) {
        lxw_row_t row = (lxw_row_t)(r + 1);
        for (size_t c = 0; c < t->ncols; c++) {
            const tl_column *col = &t->cols[c];
            lxw_col_t cc = (lxw_col_t)c;
            le = LXW_NO_ERROR;
            if (tl_table_is_missing(t, c, r)) continue;
            switch (col->type) {
            case TL_STR:
                if (col->v.s[r][0]) le = LX.worksheet_write_string(ws, row, cc, xml_safe(col->v.s[r], &sb, &cut), NULL);
                break;
            case TL_F64: {
                double v = col->v.f[r];
                if (isinf(v)) le = LX.worksheet_write_string(ws, row, cc, v > 0 ? "inf" : "-inf", NULL);
                else le = LX.worksheet_write_number(ws, row, cc, v, NULL);
                break;
            }
            case TL_I64: le = LX.worksheet_write_number(ws, row, cc, (double)col->v.i[r], NULL); break;
            case TL_BOOL: le = LX.worksheet_write_boolean(ws, row, cc, col->v.b[r], NULL); break;
            }
            if (le) goto lxw_err;
        }
    }
    tl_buf_free(&sb);
    return sheet_done(x, t, name, ws, cut, sheet_name);
lxw_err:
    tl_buf_free(&sb);
    return lxw_fail(err, le, name);
}

/* ---- charts */

/* Resolves a chart's data sheet and row range; 1 = go on, 0 = skip (the
 * sheet went to CSV), <0 = error. */
static int chart_range(tl_xlsx *x, const char *sheet, size_t first_row, size_t nrows, size_t c1,
                       size_t c2, sheet_ent **se, lxw_row_t *r0, lxw_row_t *r1, tl_err *err)
{
    sheet_ent *s = find_sheet(x, sheet);
    if (!s) return tl_errf(err, TL_ENOTFOUND, "xlsx chart: no sheet '%s' in the workbook", sheet ? sheet : "(null)");
    if (!s->ws) {
        if (!x->opts.quiet)
            fprintf(stderr, "tracelens: no chart for sheet '%s': its data went to a CSV file\n", s->table_name);
        return 0;
    }
    if (c1 >= s->ncols || c2 >= s->ncols)
        return tl_errf(err, TL_EUSAGE, "xlsx chart: sheet '%s' has %zu columns, asked for column %zu",
                       s->sheet_name, s->ncols, c1 > c2 ? c1 : c2);
    if (!s->nrows) return 0; /* nothing to plot; not worth failing a report */
    if (first_row >= s->nrows)
        return tl_errf(err, TL_EUSAGE, "xlsx chart: sheet '%s' has %zu data rows, asked for row %zu", s->sheet_name,
                       s->nrows, first_row);
    size_t n = nrows ? nrows : s->nrows - first_row;
    if (first_row + n > s->nrows) n = s->nrows - first_row;
    *se = s;
    *r0 = (lxw_row_t)(first_row + 1);
    *r1 = (lxw_row_t)(first_row + n);
    return 1;
}

static int place_chart(tl_xlsx *x, lxw_chart *ch, const sheet_ent *data, const char *dest, int row, int col,
                       double xs, double ys, tl_err *err)
{
    const sheet_ent *d = dest ? find_sheet(x, dest) : data;
    if (!d || !d->ws) return tl_errf(err, TL_ENOTFOUND, "xlsx chart: no sheet '%s' to place the chart on", dest);
    lxw_chart_options o = {0};
    o.x_scale = xs > 0 ? xs : 1;
    o.y_scale = ys > 0 ? ys : 1;
    lxw_row_t r = (lxw_row_t)(row > 0 ? row : 1);
    lxw_col_t c = (lxw_col_t)(col >= 0 ? (size_t)col : d->ncols + 1);
    lxw_error le = LX.worksheet_insert_chart_opt(d->ws, r, c, ch, &o);
    return le ? lxw_fail(err, le, "insert chart") : TL_OK;
}

static int no_charts(tl_err *err)
{
    return tl_errf(err, TL_EUSAGE, "xlsx: chart on a workbook not opened for charts (tl_xlsx_opts.charts)");
}

int tl_report_xlsx_add_chart(tl_xlsx *x, const tl_chart_spec *c, tl_err *err)
{
    if (x->ox) return no_charts(err);
    sheet_ent *s;
    lxw_row_t r0, r1;
    int k = chart_range(x, c->sheet, c->first_row, c->nrows, c->label_col, c->value_col, &s, &r0, &r1, err);
    if (k <= 0) return k;
    uint8_t type = c->kind == TL_CHART_BAR      ? LXW_CHART_BAR
                   : c->kind == TL_CHART_COLUMN ? LXW_CHART_COLUMN
                   : c->kind == TL_CHART_PIE    ? LXW_CHART_PIE
                                                : LXW_CHART_DOUGHNUT;
    lxw_chart *ch = LX.workbook_add_chart(x->wb, type);
    if (!ch) return tl_errf(err, TL_ENOMEM, "xlsx: cannot create chart");
    lxw_chart_series *ser = LX.chart_add_series(ch, NULL, NULL);
    if (!ser) return tl_errf(err, TL_ENOMEM, "xlsx: cannot create chart series");
    LX.chart_series_set_categories(ser, s->sheet_name, r0, (lxw_col_t)c->label_col, r1, (lxw_col_t)c->label_col);
    LX.chart_series_set_values(ser, s->sheet_name, r0, (lxw_col_t)c->value_col, r1, (lxw_col_t)c->value_col);
    LX.chart_series_set_name_range(ser, s->sheet_name, 0, (lxw_col_t)c->value_col);
    if (c->title) LX.chart_title_set_name(ch, c->title);
    if (type == LXW_CHART_PIE || type == LXW_CHART_DOUGHNUT) {
        LX.chart_legend_set_position(ch, LXW_CHART_LEGEND_RIGHT);
    } else {
        LX.chart_legend_set_position(ch, LXW_CHART_LEGEND_NONE); /* one series: the title says it */
        if (c->x_title) LX.chart_axis_set_name(ch->x_axis, c->x_title);
        if (c->y_title) LX.chart_axis_set_name(ch->y_axis, c->y_title);
    }
    return place_chart(x, ch, s, c->dest_sheet, c->anchor_row, c->anchor_col, c->x_scale, c->y_scale, err);
}

/* Appends explicit points to the hidden data sheet, stacked downwards (the
 * constant-memory writer only moves forward through rows). */
static int put_points(tl_xlsx *x, const tl_xy_series *l, lxw_row_t *r0, lxw_row_t *r1, tl_err *err)
{
    if (!x->data_ws) {
        char *name = unique_sheet_name(x, "_chart_data");
        x->data_ws = LX.workbook_add_worksheet(x->wb, name);
        if (!x->data_ws) return tl_errf(err, TL_EIO, "xlsx: cannot add sheet '%s'", name);
        LX.worksheet_hide(x->data_ws);
        x->data_name = name;
        sheet_ent e = {name, name, x->data_ws, 0, 2};
        tl_vec_push(&x->sheets, e);
    }
    lxw_error le = LX.worksheet_write_string(x->data_ws, x->data_row, 0, l->name ? l->name : "", NULL);
    if (!le) le = LX.worksheet_write_string(x->data_ws, x->data_row, 1, "y", NULL);
    *r0 = x->data_row + 1;
    for (size_t i = 0; i < l->n && !le; i++) {
        lxw_row_t r = x->data_row + 1 + (lxw_row_t)i;
        if (isfinite(l->x[i])) le = LX.worksheet_write_number(x->data_ws, r, 0, l->x[i], NULL);
        if (!le && isfinite(l->y[i])) le = LX.worksheet_write_number(x->data_ws, r, 1, l->y[i], NULL);
    }
    if (le) return lxw_fail(err, le, "chart data");
    *r1 = x->data_row + (lxw_row_t)(l->n ? l->n : 1);
    x->data_row += (lxw_row_t)l->n + 2; /* one blank row between series */
    return TL_OK;
}

int tl_report_xlsx_add_scatter(tl_xlsx *x, const tl_scatter_spec *sp, tl_err *err)
{
    if (x->ox) return no_charts(err);
    sheet_ent *s;
    lxw_row_t r0, r1;
    int k = chart_range(x, sp->sheet, sp->first_row, sp->nrows, sp->x_col, sp->y_col, &s, &r0, &r1, err);
    if (k <= 0) return k;
    lxw_chart *ch = LX.workbook_add_chart(x->wb, LXW_CHART_SCATTER);
    if (!ch) return tl_errf(err, TL_ENOMEM, "xlsx: cannot create chart");
    lxw_chart_series *ser = LX.chart_add_series(ch, NULL, NULL);
    if (!ser) return tl_errf(err, TL_ENOMEM, "xlsx: cannot create chart series");
    LX.chart_series_set_categories(ser, s->sheet_name, r0, (lxw_col_t)sp->x_col, r1, (lxw_col_t)sp->x_col);
    LX.chart_series_set_values(ser, s->sheet_name, r0, (lxw_col_t)sp->y_col, r1, (lxw_col_t)sp->y_col);
    if (sp->series_name) LX.chart_series_set_name(ser, sp->series_name);
    else LX.chart_series_set_name_range(ser, s->sheet_name, 0, (lxw_col_t)sp->y_col);
    LX.chart_series_set_marker_type(ser, LXW_CHART_MARKER_CIRCLE);
    LX.chart_series_set_marker_size(ser, 5);
    for (size_t i = 0; i < sp->nlines; i++) {
        const tl_xy_series *l = &sp->lines[i];
        if (!l->n) continue;
        lxw_row_t a = 0, b = 0;
        int rc = put_points(x, l, &a, &b, err);
        if (rc) return rc;
        lxw_chart_series *ls = LX.chart_add_series(ch, NULL, NULL);
        if (!ls) return tl_errf(err, TL_ENOMEM, "xlsx: cannot create chart series");
        LX.chart_series_set_categories(ls, x->data_name, a, 0, b, 0);
        LX.chart_series_set_values(ls, x->data_name, a, 1, b, 1);
        if (l->name) LX.chart_series_set_name(ls, l->name);
        LX.chart_series_set_marker_type(ls, LXW_CHART_MARKER_NONE);
        lxw_chart_line line = {0};
        line.width = 2.0f;
        line.color = i == 0 ? 0xC00000 : 0x1F4E79;
        line.dash_type = LXW_CHART_LINE_DASH_DASH;
        LX.chart_series_set_line(ls, &line);
    }
    if (sp->title) LX.chart_title_set_name(ch, sp->title);
    if (sp->x_title) LX.chart_axis_set_name(ch->x_axis, sp->x_title);
    if (sp->y_title) LX.chart_axis_set_name(ch->y_axis, sp->y_title);
    if (!sp->linear_x) LX.chart_axis_set_log_base(ch->x_axis, 10);
    if (!sp->linear_y) LX.chart_axis_set_log_base(ch->y_axis, 10);
    LX.chart_legend_set_position(ch, LXW_CHART_LEGEND_BOTTOM);
    return place_chart(x, ch, s, sp->dest_sheet, sp->anchor_row, sp->anchor_col, sp->x_scale, sp->y_scale, err);
}

/* ---- finishing */
static void free_x(tl_xlsx *x)
{
    tl_vec_free(&x->sheets);
    tl_arena_free(&x->arena);
    free(x);
}

int tl_report_xlsx_close(tl_xlsx *x, tl_err *err)
{
    if (!x) return TL_OK;
    int rc = TL_OK;
    /* Excel needs one visible sheet: when every table went to CSV (or none
     * was added) the workbook gets an empty one. */
    int visible = 0;
    for (size_t i = 0; i < x->sheets.n; i++)
        if (x->sheets.v[i].sheet_name && !(x->data_ws && x->sheets.v[i].ws == x->data_ws)) visible = 1;
    if (x->ox) {
        if (!visible) rc = tl_ooxml_add_empty(x->ox, "Sheet1", err);
        if (rc) tl_ooxml_discard(x->ox);
        else rc = tl_ooxml_close(x->ox, err);
    } else {
        if (!visible) LX.workbook_add_worksheet(x->wb, NULL);
        lxw_error le = LX.workbook_close(x->wb);
        if (le) rc = tl_errf(err, TL_EIO, "%s: cannot write workbook: %s", x->path, LX.lxw_strerror(le));
    }
    if (rc == TL_OK && rename(x->tmp_path, x->path) != 0)
        rc = tl_errf(err, TL_EIO, "%s: cannot rename the finished workbook into place: %s", x->path, strerror(errno));
    if (rc) unlink(x->tmp_path);
    free_x(x);
    return rc;
}

void tl_report_xlsx_discard(tl_xlsx *x)
{
    if (!x) return;
    if (x->ox) {
        tl_ooxml_discard(x->ox);
    } else {
        /* Closing is the only way libxlsxwriter releases its temp files. */
        if (!x->sheets.n) LX.workbook_add_worksheet(x->wb, NULL);
        LX.workbook_close(x->wb);
    }
    unlink(x->tmp_path);
    free_x(x);
}

int tl_report_xlsx_write(const char *path, tl_table *const *tables, size_t n, const tl_xlsx_opts *opts,
                         tl_err *err)
{
    tl_xlsx *x;
    int rc = tl_report_xlsx_open(path, opts, &x, err);
    if (rc) return rc;
    for (size_t i = 0; i < n && rc == TL_OK; i++) rc = tl_report_xlsx_add_table(x, tables[i], NULL, err);
    if (rc) {
        tl_report_xlsx_discard(x);
        return rc;
    }
    return tl_report_xlsx_close(x, err);
}
