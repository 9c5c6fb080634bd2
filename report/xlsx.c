/* xlsx.c — tables to an Excel workbook, written by our SpreadsheetML
 * writer (xlsx_ooxml.c), with native charts (GPU timeline breakdown, time
 * by category, rooflines) as DrawingML parts (xlsx_chart.c). Sheet names
 * are made valid and unique here because the reference tool lets a name that
 * collides after Excel's 31-character cut overwrite an earlier sheet
 * (spec diff-compare-phases.md B5); sheets too big for Excel go to a CSV
 * beside the workbook instead of being cut. The workbook is written under a
 * temporary name and renamed on close, so a failure never leaves half a file
 * under the requested name. tl_report_xlsx_add_tables makes a run of sheets
 * on several threads (tl_ooxml_add_sheets), the same bytes as one by one. */
#include "report/report.h"
#include "report/xlsx_chart.h"
#include "report/xlsx_ooxml.h"
#include "base/profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define SHEET_NAME_MAX 31
#define XLSX_STR_MAX 32767 /* characters per cell */
#define WIDTH_SCAN_ROWS 1000
/* a chart's size at scale 1, in pixels (Excel's default chart) */
#define CHART_W_PX 480
#define CHART_H_PX 288

typedef struct sheet_ent {
    char *table_name, *sheet_name; /* sheet_name NULL: sent to CSV */
    size_t part;                   /* sheet number in the workbook; 0: none (CSV, or the chart data not yet written) */
    size_t nrows, ncols;
} sheet_ent;

struct tl_xlsx {
    tl_ooxml *ox;
    char *path, *tmp_path;
    tl_xlsx_opts opts;
    TL_VEC(sheet_ent) sheets;
    /* the hidden sheet of explicit chart points (written at close), its
     * series (copied into the arena) and its next free row (0-based) */
    const char *data_name;
    TL_VEC(tl_xy_series) points;
    size_t data_row;
    tl_arena arena;
};

int tl_report_xlsx_open(const char *path, const tl_xlsx_opts *opts, tl_xlsx **out, tl_err *err)
{
    /* the file is created under a temporary name: check the directory
     * first, so that the message names the path that was asked for */
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
    int rc = tl_ooxml_open(x->tmp_path, x->opts.charts, &x->ox, err);
    if (rc) {
        tl_arena_free(&x->arena);
        free(x);
        return rc;
    }
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
    sheet_ent e = {tl_arena_strdup(&x->arena, t->name), NULL, 0, t->nrows, t->ncols};
    if (rc == TL_OK) tl_vec_push(&x->sheets, e);
    return rc;
}

static void note_cut(const tl_xlsx *x, const char *name, int cut)
{
    if (cut && !x->opts.quiet)
        fprintf(stderr, "tracelens: sheet '%s': cells longer than %d characters were cut (Excel's limit)\n",
                name, XLSX_STR_MAX);
}

static int add_table_ooxml(tl_xlsx *x, const tl_table *t, char *name, const char **sheet_name, tl_err *err)
{
    double *w = tl_xmalloc((t->ncols ? t->ncols : 1) * sizeof *w);
    for (size_t c = 0; c < t->ncols; c++) w[c] = col_width(t, c);
    int cut = 0;
    int rc = tl_ooxml_add_sheet(x->ox, name, t, w, xml_safe, &cut, err);
    free(w);
    if (rc) return rc;
    note_cut(x, name, cut);
    sheet_ent e = {tl_arena_strdup(&x->arena, t->name), name, tl_ooxml_sheet_count(x->ox), t->nrows, t->ncols};
    tl_vec_push(&x->sheets, e);
    if (sheet_name) *sheet_name = name;
    return TL_OK;
}

static int too_big(const tl_xlsx *x, const tl_table *t)
{
    return t->nrows > x->opts.max_rows || t->ncols > TL_XLSX_MAX_COLS;
}

/* The table's sheet name, unique in the workbook (with a note when it
 * had to change). */
static char *sheet_name_for(tl_xlsx *x, const tl_table *t)
{
    char *name = unique_sheet_name(x, t->name);
    char clean[128];
    tl_report_sheet_name_clean(t->name, clean);
    if (!x->opts.quiet && strcmp(clean, name) != 0)
        fprintf(stderr, "tracelens: sheet name '%s' is already used in %s; sheet '%s' is written as '%s'\n",
                clean, x->path, t->name, name);
    return name;
}

int tl_report_xlsx_add_table(tl_xlsx *x, const tl_table *t, const char **sheet_name, tl_err *err)
{
    if (sheet_name) *sheet_name = NULL;
    if (too_big(x, t)) return write_csv_instead(x, t, err);
    return add_table_ooxml(x, t, sheet_name_for(x, t), sheet_name, err);
}

static void widths_of(const tl_table *t, double *w)
{
    for (size_t c = 0; c < t->ncols; c++) w[c] = col_width(t, c);
}

/* tables[0..n), none too big for a sheet, as the next n sheets, made on
 * several threads. */
static int add_sheet_run(tl_xlsx *x, tl_table *const *tables, size_t n, tl_err *err)
{
    tl_prof_span sp;
    tl_prof_begin(&sp, "xlsx: sheet names", TL_PROF_SERIAL);
    tl_ooxml_sheet_in *in = tl_xcalloc(n ? n : 1, sizeof *in);
    size_t first = tl_ooxml_sheet_count(x->ox);
    for (size_t i = 0; i < n; i++) {
        const tl_table *t = tables[i];
        in[i].name = sheet_name_for(x, t);
        in[i].t = t;
        sheet_ent e = {tl_arena_strdup(&x->arena, t->name), (char *)in[i].name, first + i + 1, t->nrows, t->ncols};
        tl_vec_push(&x->sheets, e);
    }
    tl_prof_end(&sp);
    int threads = x->opts.threads;
    if (threads <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cpus < 1 ? 1 : (int)cpus;
    }
    int rc = tl_ooxml_add_sheets(x->ox, in, n, widths_of, xml_safe, threads, err);
    for (size_t i = 0; i < n && !rc; i++) note_cut(x, in[i].name, in[i].cut);
    free(in);
    return rc;
}

int tl_report_xlsx_add_tables(tl_xlsx *x, tl_table *const *tables, size_t n, tl_err *err)
{
    /* runs of tables that become sheets, in parallel; a table too big for
     * a sheet goes to its CSV between them, in its place in the order */
    size_t lo = 0;
    while (lo < n) {
        size_t hi = lo;
        while (hi < n && !too_big(x, tables[hi])) hi++;
        int rc = add_sheet_run(x, tables + lo, hi - lo, err);
        if (!rc && hi < n) rc = write_csv_instead(x, tables[hi], err);
        if (rc) return rc;
        lo = hi + 1;
    }
    return TL_OK;
}

/* ---- charts */

/* Resolves a chart's data sheet and row range (0-based sheet rows, the
 * header being row 0); 1 = go on, 0 = skip (the sheet went to CSV), <0 =
 * error. */
static int chart_range(tl_xlsx *x, const char *sheet, size_t first_row, size_t nrows, size_t c1,
                       size_t c2, sheet_ent **se, size_t *r0, size_t *r1, tl_err *err)
{
    sheet_ent *s = find_sheet(x, sheet);
    if (!s) return tl_errf(err, TL_ENOTFOUND, "xlsx chart: no sheet '%s' in the workbook", sheet ? sheet : "(null)");
    if (!s->part) {
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
    *r0 = first_row + 1;
    *r1 = first_row + n;
    return 1;
}

/* the formula of a range, kept until the workbook is closed */
static const char *range(tl_xlsx *x, const char *sheet, size_t r0, size_t c0, size_t r1, size_t c1)
{
    tl_buf b = {0};
    tl_oxc_range(&b, sheet, r0, c0, r1, c1);
    tl_buf_putc(&b, 0);
    char *s = tl_arena_strdup(&x->arena, b.p);
    tl_buf_free(&b);
    return s;
}

/* Rows r0..r1 and row r of one column as one series: Excel's union
 * reference "(A,B)", as it writes a chart over a non-contiguous selection. */
static const char *union_range(tl_xlsx *x, const char *sheet, size_t r0, size_t r1, size_t r, size_t col)
{
    tl_buf b = {0};
    tl_buf_putc(&b, '(');
    tl_oxc_range(&b, sheet, r0, col, r1, col);
    tl_buf_putc(&b, ',');
    tl_oxc_range(&b, sheet, r, col, r, col);
    tl_buf_puts(&b, ")");
    tl_buf_putc(&b, 0);
    char *s = tl_arena_strdup(&x->arena, b.p);
    tl_buf_free(&b);
    return s;
}

static int place_chart(tl_xlsx *x, const tl_oxc_chart *ch, const sheet_ent *data, const char *dest, int row, int col,
                       double xs, double ys, tl_err *err)
{
    const sheet_ent *d = dest ? find_sheet(x, dest) : data;
    if (!d || !d->part) return tl_errf(err, TL_ENOTFOUND, "xlsx chart: no sheet '%s' to place the chart on", dest);
    uint32_t w = (uint32_t)(CHART_W_PX * (xs > 0 ? xs : 1) + 0.5);
    uint32_t h = (uint32_t)(CHART_H_PX * (ys > 0 ? ys : 1) + 0.5);
    size_t r = row > 0 ? (size_t)row : 1;
    size_t c = col >= 0 ? (size_t)col : d->ncols + 1;
    tl_prof_span sp;
    tl_prof_begin(&sp, "xlsx: charts and package parts", TL_PROF_SERIAL);
    tl_buf xml = {0};
    tl_oxc_chart_xml(&xml, ch);
    int rc = tl_ooxml_add_chart(x->ox, d->part, r, c, w, h, &xml, err);
    tl_buf_free(&xml);
    tl_prof_end(&sp);
    return rc;
}

static int no_charts(tl_err *err)
{
    return tl_errf(err, TL_EUSAGE, "xlsx: chart on a workbook not opened for charts (tl_xlsx_opts.charts)");
}

int tl_report_xlsx_add_chart(tl_xlsx *x, const tl_chart_spec *c, tl_err *err)
{
    if (!x->opts.charts) return no_charts(err);
    sheet_ent *s;
    size_t r0, r1;
    int k = chart_range(x, c->sheet, c->first_row, c->nrows, c->label_col, c->value_col, &s, &r0, &r1, err);
    if (k <= 0) return k;
    tl_oxc_series ser = {0};
    ser.name_ref = range(x, s->sheet_name, 0, c->value_col, 0, c->value_col);
    if (c->also_row) {
        size_t r = c->also_row; /* 1 + data row = its row below the header */
        if (r > s->nrows)
            return tl_errf(err, TL_EUSAGE, "xlsx chart: sheet '%s' has %zu data rows, asked for row %zu",
                           s->sheet_name, s->nrows, r - 1);
        ser.cat = union_range(x, s->sheet_name, r0, r1, r, c->label_col);
        ser.val = union_range(x, s->sheet_name, r0, r1, r, c->value_col);
        ser.npoints = 1;
    } else {
        ser.cat = range(x, s->sheet_name, r0, c->label_col, r1, c->label_col);
        ser.val = range(x, s->sheet_name, r0, c->value_col, r1, c->value_col);
    }
    ser.npoints += r1 - r0 + 1;
    enum { MAX_SERIES = 8 };
    tl_oxc_series all[MAX_SERIES];
    all[0] = ser;
    size_t nser = 1;
    for (size_t k = 0; k < c->nmore && nser < MAX_SERIES; k++) {
        size_t vc = c->more_values[k];
        if (vc >= s->ncols)
            return tl_errf(err, TL_EUSAGE, "xlsx chart: sheet '%s' has no column %zu", s->sheet_name, vc);
        tl_oxc_series m = ser;
        m.name_ref = range(x, s->sheet_name, 0, vc, 0, vc);
        m.val = range(x, s->sheet_name, r0, vc, r1, vc);
        all[nser++] = m;
    }
    tl_oxc_chart ch = {0};
    ch.type = c->kind == TL_CHART_BAR      ? TL_OXC_BAR
              : c->kind == TL_CHART_COLUMN ? TL_OXC_COLUMN
              : c->kind == TL_CHART_PIE    ? TL_OXC_PIE
                                           : TL_OXC_DOUGHNUT;
    ch.title = c->title;
    ch.x_title = c->x_title;
    ch.y_title = c->y_title;
    ch.ser = all;
    ch.nser = nser;
    return place_chart(x, &ch, s, c->dest_sheet, c->anchor_row, c->anchor_col, c->x_scale, c->y_scale, err);
}

/* Keeps explicit points for the hidden data sheet, the series stacked
 * downwards with a blank row between them; *r0..*r1: their rows. */
static void keep_points(tl_xlsx *x, const tl_xy_series *l, size_t *r0, size_t *r1)
{
    if (!x->data_name) {
        char *name = unique_sheet_name(x, "_chart_data");
        x->data_name = name;
        sheet_ent e = {name, name, 0, 0, 2};
        tl_vec_push(&x->sheets, e);
    }
    tl_xy_series c = {l->name ? tl_arena_strdup(&x->arena, l->name) : NULL, NULL, NULL, l->n};
    double *xy = tl_arena_alloc(&x->arena, 2 * l->n * sizeof *xy);
    memcpy(xy, l->x, l->n * sizeof *xy);
    memcpy(xy + l->n, l->y, l->n * sizeof *xy);
    c.x = xy;
    c.y = xy + l->n;
    tl_vec_push(&x->points, c);
    *r0 = x->data_row + 1;
    *r1 = x->data_row + l->n;
    x->data_row += l->n + 2;
}

int tl_report_xlsx_add_scatter(tl_xlsx *x, const tl_scatter_spec *sp, tl_err *err)
{
    if (!x->opts.charts) return no_charts(err);
    sheet_ent *s;
    size_t r0, r1;
    int k = chart_range(x, sp->sheet, sp->first_row, sp->nrows, sp->x_col, sp->y_col, &s, &r0, &r1, err);
    if (k <= 0) return k;
    tl_oxc_series *ser = tl_xcalloc(1 + sp->nlines, sizeof *ser);
    ser[0].name = sp->series_name;
    if (!sp->series_name) ser[0].name_ref = range(x, s->sheet_name, 0, sp->y_col, 0, sp->y_col);
    ser[0].cat = range(x, s->sheet_name, r0, sp->x_col, r1, sp->x_col);
    ser[0].val = range(x, s->sheet_name, r0, sp->y_col, r1, sp->y_col);
    size_t n = 1, si = (size_t)(s - x->sheets.v);
    for (size_t i = 0; i < sp->nlines; i++) {
        const tl_xy_series *l = &sp->lines[i];
        if (!l->n) continue;
        size_t a, b;
        keep_points(x, l, &a, &b);
        s = &x->sheets.v[si]; /* keep_points may add the data sheet, moving the sheet list */
        ser[n].name = l->name;
        ser[n].cat = range(x, x->data_name, a, 0, b, 0);
        ser[n].val = range(x, x->data_name, a, 1, b, 1);
        ser[n].line = 1;
        ser[n].rgb = i == 0 ? 0xC00000 : 0x1F4E79;
        n++;
    }
    tl_oxc_chart ch = {0};
    ch.type = TL_OXC_SCATTER;
    ch.title = sp->title;
    ch.x_title = sp->x_title;
    ch.y_title = sp->y_title;
    ch.log_x = !sp->linear_x;
    ch.log_y = !sp->linear_y;
    ch.ser = ser;
    ch.nser = n;
    int rc = place_chart(x, &ch, s, sp->dest_sheet, sp->anchor_row, sp->anchor_col, sp->x_scale, sp->y_scale, err);
    free(ser);
    return rc;
}

/* ---- finishing */
static void free_x(tl_xlsx *x)
{
    tl_vec_free(&x->sheets);
    tl_vec_free(&x->points);
    tl_arena_free(&x->arena);
    free(x);
}

int tl_report_xlsx_close(tl_xlsx *x, tl_err *err)
{
    if (!x) return TL_OK;
    tl_prof_span sp;
    tl_prof_begin(&sp, "xlsx: charts and package parts", TL_PROF_SERIAL);
    int rc = TL_OK;
    /* Excel needs one visible sheet: when every table went to CSV (or none
     * was added) the workbook gets an empty one. */
    int visible = 0;
    for (size_t i = 0; i < x->sheets.n; i++)
        if (x->sheets.v[i].part) visible = 1;
    if (!visible) rc = tl_ooxml_add_empty(x->ox, "Sheet1", err);
    if (!rc && x->points.n) rc = tl_ooxml_add_points_sheet(x->ox, x->data_name, x->points.v, x->points.n, err);
    if (rc) tl_ooxml_discard(x->ox);
    else rc = tl_ooxml_close(x->ox, err);
    if (rc == TL_OK && rename(x->tmp_path, x->path) != 0)
        rc = tl_errf(err, TL_EIO, "%s: cannot rename the finished workbook into place: %s", x->path, strerror(errno));
    if (rc) unlink(x->tmp_path);
    free_x(x);
    tl_prof_end(&sp);
    return rc;
}

void tl_report_xlsx_discard(tl_xlsx *x)
{
    if (!x) return;
    tl_ooxml_discard(x->ox);
    unlink(x->tmp_path);
    free_x(x);
}

int tl_report_xlsx_write(const char *path, tl_table *const *tables, size_t n, const tl_xlsx_opts *opts,
                         tl_err *err)
{
    tl_xlsx *x;
    int rc = tl_report_xlsx_open(path, opts, &x, err);
    if (rc) return rc;
    rc = tl_report_xlsx_add_tables(x, tables, n, err);
    if (rc) {
        tl_report_xlsx_discard(x);
        return rc;
    }
    return tl_report_xlsx_close(x, err);
}
