/* xlsx_ooxml.c — workbooks as SpreadsheetML (ECMA-376), generated here and
 * deflated straight into the zip (zip_write.c).
 *
 * Numbers take a short exact path (below) that keeps all 17 significant
 * digits a double may need, the text is appended to a buffer without
 * printf, and igzip deflates it, so that a corpus workbook of millions of
 * cells is written in seconds (docs/ARCHITECTURE.md has the figures).
 *
 * The package holds what Excel needs and nothing else: [Content_Types].xml,
 * _rels/.rels, xl/workbook.xml and its rels, xl/styles.xml (four cell
 * formats: default, bold headers, 3 decimals for ms/µs columns, 2 for
 * percentages; see num_style) and one xl/worksheets/sheetN.xml per sheet
 * with inline strings (no shared-string table, so a sheet is written in one
 * pass and nothing is held), its column widths and a frozen header row.
 * A workbook with charts adds, per visible sheet, a drawing
 * (xl/drawings/drawingN.xml, anchoring the sheet's charts) with the rels
 * sheet -> drawing -> chart, and one xl/charts/chartN.xml per chart
 * (xlsx_chart.c writes its XML). The sheets and charts go first in the
 * zip: their names and count are known only at close, and zip readers go
 * by the central directory.
 *
 * tl_ooxml_add_sheets makes several sheets at once, into memory
 * (tl_zdef), fed to the deflater in the same blocks as the one-at-a-time
 * path so the bytes match: a sheet on one thread, or a sheet of more than
 * SEG_CELLS cells in segments of rows on several (each segment a deflate
 * stream of its own, which both paths cut alike, joined in order); the
 * thread that finishes the sheet at the head of the order reserves the
 * places of the finished run and writes it into the file
 * (tl_zipw_reserve, tl_zipw_put_at). */
#include "report/xlsx_ooxml.h"

#include "report/zip_write.h"
#include "base/profile.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLUSH_AT (1u << 20)

typedef struct ox_sheet {
    char *name;
    int hidden;
    /* drawing: the sheet shows xl/drawings/drawingN.xml (N: its sheet
     * number); col_px: its columns' widths in pixels, to anchor charts */
    int drawing;
    uint32_t *col_px;
    size_t ncols;
} ox_sheet;

/* a chart's place: top-left and bottom-right cells (0-based) and the
 * offsets into them in EMU */
typedef struct ox_anchor {
    size_t sheet, chart; /* 1-based part numbers */
    uint32_t c0, r0, c1, r1;
    uint64_t c1_off, r1_off;
} ox_anchor;

/* Where a sheet's XML goes: generated into b, handed to emit in blocks
 * of about FLUSH_AT bytes, cut at row ends (the blocks decide the deflate
 * stream's bytes, so both ways of writing a sheet cut them alike). */
typedef struct ox_sink {
    tl_buf b;
    int (*emit)(void *ctx, const void *p, size_t n, tl_err *err);
    int (*cut)(void *ctx, tl_err *err); /* ends a deflate segment */
    void *ctx;
} ox_sink;

struct tl_ooxml {
    tl_zipw *z;
    int drawings; /* every visible sheet gets a drawing, for charts */
    TL_VEC(ox_sheet) sheets;
    TL_VEC(ox_anchor) anchors; /* in chart order */
    ox_sink out; /* XML being generated, into the zip entry */
};

static int emit_zip(void *ctx, const void *p, size_t n, tl_err *err) { return tl_zipw_write(ctx, p, n, err); }
static int cut_zip(void *ctx, tl_err *err) { return tl_zipw_cut(ctx, err); }

int tl_ooxml_open(const char *path, int drawings, tl_ooxml **out, tl_err *err)
{
    tl_zipw *z;
    int rc = tl_zipw_open(path, &z, err);
    if (rc) return rc;
    tl_ooxml *o = tl_xcalloc(1, sizeof *o);
    o->z = z;
    o->drawings = drawings;
    o->out.emit = emit_zip;
    o->out.cut = cut_zip;
    o->out.ctx = z;
    *out = o;
    return TL_OK;
}

size_t tl_ooxml_sheet_count(const tl_ooxml *o) { return o->sheets.n; }

/* ---- text */

#define PUT_LIT(b, s) tl_buf_append(b, s, sizeof s - 1)

/* decimal text of v into o (at most 20 bytes); returns its length */
static size_t fmt_u64(char *o, uint64_t v)
{
    char t[24];
    size_t i = sizeof t;
    do t[--i] = (char)('0' + v % 10), v /= 10;
    while (v);
    memcpy(o, t + i, sizeof t - i);
    return sizeof t - i;
}

static size_t fmt_i64(char *o, int64_t v)
{
    if (v >= 0) return fmt_u64(o, (uint64_t)v);
    o[0] = '-';
    return 1 + fmt_u64(o + 1, (uint64_t)0 - (uint64_t)v);
}

static void put_u64(tl_buf *b, uint64_t v)
{
    char t[24];
    tl_buf_append(b, t, fmt_u64(t, v));
}

/* XML character data / attribute value: & < > " escaped */
static void put_esc(tl_buf *b, const char *s)
{
    const char *run = s;
    for (; *s; s++) {
        const char *rep;
        switch (*s) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        default: continue;
        }
        tl_buf_append(b, run, (size_t)(s - run));
        tl_buf_append(b, rep, strlen(rep));
        run = s + 1;
    }
    tl_buf_append(b, run, (size_t)(s - run));
}

static const double P10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Tries v = I / 10^k for k = 0, 1, ...: when (double)I / 10^k == v, the
 * decimal I·10^-k is the text, since that division of two exact doubles is
 * correctly rounded, as is reading the text back. Report values are mostly
 * integers and µs with up to 3-6 decimals, which this prints in a few
 * multiplications; the rest (thirds, tiny or huge values) go through
 * "%.17g", which always reads back exactly. */
size_t tl_ooxml_fmt_double(char *o, double v)
{
    if (v == 0) {
        o[0] = '0';
        return 1;
    }
    double a = fabs(v);
    if (a >= 1e-7 && a < 9e15) {
        for (int k = 0; k <= 17; k++) {
            double x = a * P10[k];
            if (x >= 9007199254740992.0) break;
            uint64_t I = (uint64_t)(x + 0.5);
            if ((double)I / P10[k] != a) continue;
            char d[24];
            int nd = 0;
            do d[nd++] = (char)('0' + I % 10), I /= 10;
            while (I);
            size_t n = 0;
            if (v < 0) o[n++] = '-';
            if (nd <= k) { /* 0.00ddd */
                o[n++] = '0';
                o[n++] = '.';
                for (int z = 0; z < k - nd; z++) o[n++] = '0';
                while (nd) o[n++] = d[--nd];
            } else {
                while (nd > k) o[n++] = d[--nd];
                if (k) {
                    o[n++] = '.';
                    while (nd) o[n++] = d[--nd];
                }
            }
            return n;
        }
    }
    return (size_t)snprintf(o, 25, "%.17g", v);
}

/* ---- one sheet */

static int flush(ox_sink *k, int force, tl_err *err)
{
    if (!force && k->b.n < FLUSH_AT) return TL_OK;
    int rc = k->emit(k->ctx, k->b.p, k->b.n, err);
    k->b.n = 0;
    return rc;
}

/* column letters: A..Z, AA.., up to XFD */
static size_t col_ref(size_t c, char out[4])
{
    char t[4];
    size_t n = 0;
    c++;
    while (c) {
        c--;
        t[n++] = (char)('A' + c % 26);
        c /= 26;
    }
    for (size_t i = 0; i < n; i++) out[i] = t[n - 1 - i];
    return n;
}

/* Excel stores a width w (in characters of the default font) as
 * trunc((w·7 + 5) / 7 · 256) / 256 (7-pixel digits, 5 pixels of padding) */
static double stored_width(double w)
{
    return w > 0 ? (double)(long)((w * 7 + 5) / 7 * 256) / 256 : 0;
}

static void put_width(tl_buf *b, double w)
{
    char t[32];
    tl_buf_append(b, t, tl_ooxml_fmt_double(t, stored_width(w)));
}

/* Excel's pixels for a column of width w characters (7-pixel digits, 5
 * pixels of padding; narrower than one character: 12 pixels a character) */
static uint32_t col_px(double w)
{
    return w < 1 ? (uint32_t)(w * 12 + 0.5) : (uint32_t)(w * 7 + 0.5) + 5;
}

/* Keeps a drawing sheet's column widths in pixels (hidden columns: 0). */
static void keep_col_px(ox_sheet *s, const tl_table *t, const double *widths)
{
    if (!s->drawing) return;
    s->ncols = t->ncols;
    s->col_px = tl_xmalloc((t->ncols ? t->ncols : 1) * sizeof *s->col_px);
    for (size_t c = 0; c < t->ncols; c++) s->col_px[c] = t->cols[c].hidden ? 0 : col_px(widths[c]);
}

/* An upper bound on the sheet's XML: decides whether its zip entry needs
 * zip64 sizes (4 GiB), which only sheets near Excel's limits approach. */
static int may_exceed_4g(const tl_table *t)
{
    double cells = (double)t->nrows * (double)t->ncols;
    if (cells * 64 < 3e9) {
        int strings = 0;
        for (size_t c = 0; c < t->ncols; c++) strings |= t->cols[c].type == TL_STR;
        if (!strings) return 0;
    }
    uint64_t bound = 4096;
    for (size_t c = 0; c < t->ncols; c++) {
        const tl_column *col = &t->cols[c];
        bound += (uint64_t)t->nrows * 64;
        if (col->type == TL_STR)
            for (size_t r = 0; r < t->nrows; r++) bound += col->v.s[r] ? 6 * strlen(col->v.s[r]) : 0;
    }
    return bound >= 0xfff00000u;
}

static const char SHEET_HEAD[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
    "<worksheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" "
    "xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\">";

/* the XML of a string cell after its reference: the type, the text
 * (escaped; whitespace at either end kept) and the end of the cell */
static void string_tail(tl_buf *b, const char *s)
{
    PUT_LIT(b, "\" t=\"inlineStr\"><is><t");
    size_t n = strlen(s);
    int edge = n && (strchr(" \t\n\r", s[0]) || strchr(" \t\n\r", s[n - 1]));
    if (edge) PUT_LIT(b, " xml:space=\"preserve\"");
    PUT_LIT(b, ">");
    put_esc(b, s);
    PUT_LIT(b, "</t></is></c>");
}

static void put_string_cell(tl_buf *b, const char *ref, size_t rl, const char *row, size_t nl, const char *s, int bold)
{
    PUT_LIT(b, "<c r=\"");
    tl_buf_append(b, ref, rl);
    tl_buf_append(b, row, nl);
    if (bold) PUT_LIT(b, "\" s=\"1");
    string_tail(b, s);
}

/* Room for need more bytes; returns where they go (the caller sets b->n).
 * Inline check: called for every cell. */
static inline char *room(tl_buf *b, size_t need)
{
    if (b->n + need + 1 > b->cap) tl_buf_reserve(b, need);
    return b->p + b->n;
}
#define W_LIT(w, s) (memcpy(w, s, sizeof s - 1), (w) += sizeof s - 1)

static void sheet_part(size_t sheet, char part[64]) { snprintf(part, 64, "xl/worksheets/sheet%zu.xml", sheet); }

static void push_sheet(tl_ooxml *o, const char *name, int hidden)
{
    ox_sheet s = {tl_xstrdup(name), hidden, o->drawings && !hidden, NULL, 0};
    tl_vec_push(&o->sheets, s);
}

static int begin_sheet(tl_ooxml *o, const char *name, int big, int hidden, tl_err *err)
{
    char part[64];
    sheet_part(o->sheets.n + 1, part);
    int rc = tl_zipw_begin(o->z, part, big, err);
    if (rc) return rc;
    push_sheet(o, name, hidden);
    o->out.b.n = 0;
    PUT_LIT(&o->out.b, SHEET_HEAD);
    return TL_OK;
}

/* The sheet's XML after its data, and the last block out. */
static int end_xml(ox_sink *k, int drawing, tl_err *err)
{
    PUT_LIT(&k->b, "<pageMargins left=\"0.7\" right=\"0.7\" top=\"0.75\" bottom=\"0.75\" header=\"0.3\" "
                   "footer=\"0.3\"/>");
    if (drawing) PUT_LIT(&k->b, "<drawing r:id=\"rId1\"/>");
    PUT_LIT(&k->b, "</worksheet>");
    return flush(k, 1, err);
}

static int end_sheet(tl_ooxml *o, tl_err *err)
{
    int rc = end_xml(&o->out, o->sheets.v[o->sheets.n - 1].drawing, err);
    if (!rc) rc = tl_zipw_end(o->z, err);
    return rc;
}

/* The cell style of a float column, by what its name says it holds:
 * times in ms or µs with 3 decimals (style 2), percentages with 2 (style
 * 3), anything else as Excel's General (0). Only the display changes: the
 * cell keeps every digit. */
static char num_style(const tl_column *col)
{
    if (col->type != TL_F64 || !col->name) return 0;
    const char *n = col->name;
    if (strstr(n, "(%)") || strstr(n, "percent") || strstr(n, "Percent") || strstr(n, "_pct")) return '3';
    size_t len = strlen(n);
    if (strstr(n, "(ms)") || strstr(n, "(µs)") || strstr(n, "(us)") || strstr(n, " ms") || strstr(n, "_ms") ||
        strstr(n, "_us") || (len >= 3 && !strcmp(n + len - 3, " ms")))
        return '2';
    return 0;
}

/* A sheet of more than SEG_CELLS cells is deflated in segments of
 * seg_rows(t) whole rows, each a fresh deflate stream after a sync flush
 * (tl_zipw_cut), so that several threads can make one large sheet
 * (tl_ooxml_add_sheets). The cuts depend on the table alone: both ways of
 * writing a sheet make the same bytes. */
#define SEG_CELLS (1u << 18)

static size_t seg_rows(const tl_table *t)
{
    size_t r = SEG_CELLS / (t->ncols + 1);
    return r ? r : 1;
}

static size_t seg_count(const tl_table *t)
{
    size_t r = seg_rows(t);
    return t->nrows > r ? (t->nrows + r - 1) / r : 1;
}

/* The sheet's XML from its dimension to its header row, into b (first:
 * the workbook's first sheet, shown selected). */
static void sheet_head_xml(tl_buf *b, const tl_table *t, const double *widths, int first, tl_ooxml_text_fn xml_text,
                           int *cut)
{
    size_t nc = t->ncols;
    char ref[4];
    PUT_LIT(b, "<dimension ref=\"A1");
    if (nc) {
        PUT_LIT(b, ":");
        tl_buf_append(b, ref, col_ref(nc - 1, ref));
        put_u64(b, t->nrows + 1);
    }
    PUT_LIT(b, "\"/><sheetViews><sheetView ");
    if (first) PUT_LIT(b, "tabSelected=\"1\" ");
    PUT_LIT(b, "workbookViewId=\"0\">");
    if (nc)
        PUT_LIT(b, "<pane ySplit=\"1\" topLeftCell=\"A2\" activePane=\"bottomLeft\" state=\"frozen\"/>"
                   "<selection pane=\"bottomLeft\"/>");
    PUT_LIT(b, "</sheetView></sheetViews><sheetFormatPr defaultRowHeight=\"15\"/>");
    if (nc) {
        PUT_LIT(b, "<cols>");
        for (size_t c = 0; c < nc; c++) {
            PUT_LIT(b, "<col min=\"");
            put_u64(b, c + 1);
            PUT_LIT(b, "\" max=\"");
            put_u64(b, c + 1);
            PUT_LIT(b, "\" width=\"");
            put_width(b, widths[c]);
            PUT_LIT(b, "\" customWidth=\"1\"");
            if (t->cols[c].hidden) PUT_LIT(b, " hidden=\"1\"");
            PUT_LIT(b, "/>");
        }
        PUT_LIT(b, "</cols>");
    }
    PUT_LIT(b, "<sheetData>");
    if (nc) {
        tl_buf sb = {0};
        PUT_LIT(b, "<row r=\"1\">");
        for (size_t c = 0; c < nc; c++) {
            size_t rl = col_ref(c, ref);
            put_string_cell(b, ref, rl, "1", 1, xml_text(t->cols[c].name, &sb, cut), 1);
        }
        PUT_LIT(b, "</row>");
        tl_buf_free(&sb);
    }
}

/* The XML of data rows [r0, r1) into k, handed on in blocks cut at row
 * ends. */
static int rows_xml(ox_sink *k, const tl_table *t, size_t r0, size_t r1, tl_ooxml_text_fn xml_text, int *cut,
                    tl_err *err)
{
    int rc = TL_OK;
    tl_buf *b = &k->b;
    size_t nc = t->ncols;
    char(*refs)[4] = tl_xmalloc((nc ? nc : 1) * sizeof *refs);
    size_t *rl = tl_xmalloc((nc ? nc : 1) * sizeof *rl);
    for (size_t c = 0; c < nc; c++) rl[c] = col_ref(c, refs[c]);
    tl_buf sb = {0};
    /* Per column, the last string cell's text and the XML after its
     * reference (string_tail): report columns repeat a few texts (names,
     * dtypes, rank lists) row after row, which are then escaped once. The
     * rest of a row is written straight into the buffer, since appending
     * small pieces would dominate a large sheet's writing time. */
    char *style = tl_xcalloc(nc ? nc : 1, 1);
    for (size_t c = 0; c < nc; c++) style[c] = num_style(&t->cols[c]);
    const char **last = tl_xcalloc(nc ? nc : 1, sizeof *last);
    tl_buf *tail = tl_xcalloc(nc ? nc : 1, sizeof *tail);
    char row[24];
    for (size_t r = r0; r < r1 && !rc; r++) {
        size_t nl = fmt_u64(row, r + 2);
        char *w = room(b, 16 + nl);
        W_LIT(w, "<row r=\"");
        memcpy(w, row, nl), w += nl;
        W_LIT(w, "\">");
        b->n = (size_t)(w - b->p);
        for (size_t c = 0; c < nc; c++) {
            const tl_column *col = &t->cols[c];
            if (col->type == TL_STR) {
                const char *s = col->v.s[r];
                if (!s) continue;
                if (s != last[c]) {
                    tail[c].n = 0;
                    if (s[0]) string_tail(&tail[c], xml_text(s, &sb, cut));
                    last[c] = s;
                }
                if (!tail[c].n) continue; /* "": no cell */
                w = room(b, 8 + rl[c] + nl + tail[c].n);
                W_LIT(w, "<c r=\"");
                memcpy(w, refs[c], rl[c]), w += rl[c];
                memcpy(w, row, nl), w += nl;
                memcpy(w, tail[c].p, tail[c].n), w += tail[c].n;
                b->n = (size_t)(w - b->p);
                continue;
            }
            if (col->type == TL_F64 && isinf(col->v.f[r])) {
                put_string_cell(b, refs[c], rl[c], row, nl, col->v.f[r] > 0 ? "inf" : "-inf", 0);
                continue;
            }
            if (col->type == TL_F64 ? isnan(col->v.f[r]) : col->valid && !col->valid[r]) continue;
            w = room(b, 64 + rl[c] + nl);
            W_LIT(w, "<c r=\"");
            memcpy(w, refs[c], rl[c]), w += rl[c];
            memcpy(w, row, nl), w += nl;
            if (col->type == TL_BOOL) W_LIT(w, "\" t=\"b");
            if (style[c]) {
                W_LIT(w, "\" s=\"");
                *w++ = style[c];
            }
            W_LIT(w, "\"><v>");
            switch (col->type) {
            case TL_F64: w += tl_ooxml_fmt_double(w, col->v.f[r]); break;
            case TL_I64: w += fmt_i64(w, col->v.i[r]); break;
            default: *w++ = col->v.b[r] ? '1' : '0'; break;
            }
            W_LIT(w, "</v></c>");
            b->n = (size_t)(w - b->p);
        }
        PUT_LIT(b, "</row>");
        rc = flush(k, 0, err);
    }
    for (size_t c = 0; c < nc; c++) tl_buf_free(&tail[c]);
    free(tail);
    free(last);
    free(style);
    tl_buf_free(&sb);
    free(refs);
    free(rl);
    return rc;
}

/* Ends the segment that ends before row r, if one does. */
static int seg_end(ox_sink *k, const tl_table *t, size_t r, tl_err *err)
{
    if (r == 0 || r >= t->nrows || r % seg_rows(t)) return TL_OK;
    int rc = flush(k, 1, err);
    return rc ? rc : k->cut(k->ctx, err);
}

/* The sheet's rows, in segments, and the end of its data. */
static int sheet_rows_xml(ox_sink *k, const tl_table *t, tl_ooxml_text_fn xml_text, int *cut, tl_err *err)
{
    size_t step = seg_rows(t);
    int rc = TL_OK;
    for (size_t r = 0; r < t->nrows && !rc; r += step) {
        size_t end = t->nrows - r > step ? r + step : t->nrows;
        rc = rows_xml(k, t, r, end, xml_text, cut, err);
        if (!rc) rc = seg_end(k, t, end, err);
    }
    PUT_LIT(&k->b, "</sheetData>");
    return rc;
}

int tl_ooxml_add_sheet(tl_ooxml *o, const char *sheet_name, const tl_table *t, const double *widths,
                       tl_ooxml_text_fn xml_text, int *cut, tl_err *err)
{
    int rc = begin_sheet(o, sheet_name, may_exceed_4g(t), 0, err);
    if (rc) return rc;
    keep_col_px(&o->sheets.v[o->sheets.n - 1], t, widths);
    sheet_head_xml(&o->out.b, t, widths, o->sheets.n == 1, xml_text, cut);
    rc = sheet_rows_xml(&o->out, t, xml_text, cut, err);
    if (!rc) rc = end_sheet(o, err);
    return rc;
}

/* ---- sheets on several threads */

typedef struct ox_job {
    tl_ooxml_sheet_in *in;
    size_t sheet; /* its number (1-based) */
    ox_sheet *s;
    int big, rc;
    int done, written; /* under the batch's mutex */
    uint64_t off;      /* its place in the file */
    tl_zdef *z;        /* the whole entry, once its segments are joined */
    tl_err err;
    /* its segments (seg_count), made apart: each one's deflated bytes,
     * result and cut flag; left: those not made yet */
    size_t nseg;
    tl_zdef **seg;
    int *seg_rc, *seg_cut;
    tl_err *seg_err;
    atomic_size_t left;
} ox_job;

/* One segment of one sheet: the unit of work. */
typedef struct ox_task {
    ox_job *j;
    size_t seg;
} ox_task;

/* The sheets are placed in the zip in order: whichever thread finishes
 * the job that completes a run of done sheets at the head reserves their
 * places (under the mutex) and writes them there (beside the others). */
typedef struct ox_batch {
    tl_ooxml *o;
    ox_job *jobs;
    size_t n;
    ox_task *tasks; /* largest first */
    size_t ntasks;
    size_t head; /* jobs placed so far */
    size_t nwritten;
    atomic_size_t next;
    void (*widths)(const tl_table *t, double *w);
    tl_ooxml_text_fn xml_text;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} ox_batch;

static int emit_zdef(void *ctx, const void *p, size_t n, tl_err *err) { return tl_zdef_write(ctx, p, n, err); }
static int cut_zdef(void *ctx, tl_err *err) { return tl_zdef_cut(ctx, err); }

/* Marks j done; places the run of done sheets at the head, if j completes
 * one, and writes them (pwrite, beside the other threads). */
static void place_done(ox_batch *bt, ox_job *j)
{
    pthread_mutex_lock(&bt->mu);
    j->done = 1;
    size_t from = bt->head;
    for (; bt->head < bt->n && bt->jobs[bt->head].done; bt->head++) {
        ox_job *h = &bt->jobs[bt->head];
        if (!h->rc) h->rc = tl_zipw_reserve(bt->o->z, h->z, h->big, &h->off, &h->err);
    }
    size_t to = bt->head;
    pthread_mutex_unlock(&bt->mu);
    tl_prof_span sp;
    tl_prof_begin(&sp, "xlsx: zip entry write", TL_PROF_PARALLEL);
    for (size_t i = from; i < to; i++) {
        ox_job *h = &bt->jobs[i];
        if (!h->rc) h->rc = tl_zipw_put_at(bt->o->z, h->z, h->big, h->off, &h->err);
        tl_zdef_free(h->z);
        h->z = NULL;
    }
    tl_prof_end(&sp);
    pthread_mutex_lock(&bt->mu);
    bt->nwritten += to - from;
    pthread_cond_broadcast(&bt->cv);
    pthread_mutex_unlock(&bt->mu);
}

/* The sheet's segments joined into its entry, in order; the first error
 * is the sheet's. */
static void join_segments(ox_job *j)
{
    j->z = j->seg[0];
    for (size_t i = 0; i < j->nseg; i++) {
        if (j->seg_rc[i] && !j->rc) j->rc = j->seg_rc[i], j->err = j->seg_err[i];
        j->in->cut |= j->seg_cut[i];
        if (i) tl_zdef_append(j->z, j->seg[i]);
    }
}

/* One segment of a sheet: its XML (the first one with the sheet's head,
 * widths and the size check, the last with its end) deflated, on any
 * thread; the thread that makes a sheet's last segment joins them and
 * places the sheet. */
static void run_task(ox_batch *bt, const ox_task *tk)
{
    tl_prof_span sp;
    tl_prof_begin(&sp, "xlsx: sheet XML + deflate", TL_PROF_PARALLEL);
    ox_job *j = tk->j;
    const tl_table *t = j->in->t;
    size_t step = seg_rows(t), r0 = tk->seg * step;
    size_t r1 = t->nrows - r0 > step ? r0 + step : t->nrows;
    int last = tk->seg + 1 == j->nseg, cut = 0, rc;
    tl_err e = {0};
    char part[64];
    sheet_part(j->sheet, part);
    tl_zdef *z = tl_zdef_new(part);
    ox_sink k = {{0}, emit_zdef, cut_zdef, z};
    if (tk->seg == 0) {
        double *w = tl_xmalloc((t->ncols ? t->ncols : 1) * sizeof *w);
        bt->widths(t, w);
        keep_col_px(j->s, t, w);
        j->big = may_exceed_4g(t);
        PUT_LIT(&k.b, SHEET_HEAD);
        sheet_head_xml(&k.b, t, w, j->sheet == 1, bt->xml_text, &cut);
        free(w);
    }
    rc = t->nrows ? rows_xml(&k, t, r0, r1, bt->xml_text, &cut, &e) : TL_OK;
    if (!rc && !last) rc = seg_end(&k, t, r1, &e);
    if (!rc && last) {
        PUT_LIT(&k.b, "</sheetData>");
        rc = end_xml(&k, j->s->drawing, &e);
        if (!rc) rc = tl_zdef_finish(z, &e);
    }
    tl_buf_free(&k.b);
    j->seg[tk->seg] = z;
    j->seg_rc[tk->seg] = rc;
    j->seg_cut[tk->seg] = cut;
    if (rc) j->seg_err[tk->seg] = e;
    tl_prof_end(&sp);
    if (atomic_fetch_sub(&j->left, 1) == 1) {
        join_segments(j);
        place_done(bt, j);
    }
}

/* Takes tasks until none is left; 1 when it ran one. */
static int take_task(ox_batch *bt)
{
    size_t i = atomic_fetch_add(&bt->next, 1);
    if (i >= bt->ntasks) return 0;
    run_task(bt, &bt->tasks[i]);
    return 1;
}

static void *task_thread(void *arg)
{
    while (take_task(arg)) {}
    return NULL;
}

static size_t task_weight(const ox_task *tk)
{
    const tl_table *t = tk->j->in->t;
    size_t step = seg_rows(t), r0 = tk->seg * step;
    size_t rows = t->nrows - r0 > step ? step : t->nrows - r0;
    return rows * (t->ncols + 1);
}

/* largest first; ties in sheet and segment order */
static int cmp_tasks(const void *a, const void *b)
{
    const ox_task *x = a, *y = b;
    size_t wa = task_weight(x), wb = task_weight(y);
    if (wa != wb) return wa > wb ? -1 : 1;
    if (x->j != y->j) return x->j < y->j ? -1 : 1;
    return x->seg < y->seg ? -1 : x->seg > y->seg;
}

int tl_ooxml_add_sheets(tl_ooxml *o, tl_ooxml_sheet_in *in, size_t n, void (*widths)(const tl_table *t, double *w),
                        tl_ooxml_text_fn xml_text, int threads, tl_err *err)
{
    if (!n) return TL_OK;
    ox_batch bt = {.o = o, .jobs = tl_xcalloc(n, sizeof *bt.jobs), .n = n, .widths = widths, .xml_text = xml_text};
    atomic_init(&bt.next, 0);
    pthread_mutex_init(&bt.mu, NULL);
    pthread_cond_init(&bt.cv, NULL);
    size_t first = o->sheets.n;
    for (size_t i = 0; i < n; i++) push_sheet(o, in[i].name, 0);
    for (size_t i = 0; i < n; i++) {
        ox_job *j = &bt.jobs[i];
        in[i].cut = 0;
        j->in = &in[i];
        j->sheet = first + i + 1;
        j->s = &o->sheets.v[first + i];
        j->nseg = seg_count(in[i].t);
        j->seg = tl_xcalloc(j->nseg, sizeof *j->seg);
        j->seg_rc = tl_xcalloc(j->nseg, sizeof *j->seg_rc);
        j->seg_cut = tl_xcalloc(j->nseg, sizeof *j->seg_cut);
        j->seg_err = tl_xcalloc(j->nseg, sizeof *j->seg_err);
        atomic_init(&j->left, j->nseg);
        bt.ntasks += j->nseg;
    }
    bt.tasks = tl_xmalloc(bt.ntasks * sizeof *bt.tasks);
    for (size_t i = 0, k = 0; i < n; i++)
        for (size_t g = 0; g < bt.jobs[i].nseg; g++) bt.tasks[k++] = (ox_task){&bt.jobs[i], g};
    qsort(bt.tasks, bt.ntasks, sizeof *bt.tasks, cmp_tasks);
    if (threads < 1) threads = 1;
    if ((size_t)threads > bt.ntasks) threads = (int)bt.ntasks;
    tl_thread **th = tl_xcalloc((size_t)threads, sizeof *th);
    int started = 0;
    for (int k = 1; k < threads; k++)
        if ((th[started] = tl_thread_start(task_thread, &bt)) != NULL) started++;
    /* this thread takes tasks too, then waits for the last sheet to be written */
    while (take_task(&bt)) {}
    pthread_mutex_lock(&bt.mu);
    while (bt.nwritten < n) pthread_cond_wait(&bt.cv, &bt.mu);
    pthread_mutex_unlock(&bt.mu);
    for (int k = 0; k < started; k++) tl_thread_join(th[k]);
    int rc = TL_OK;
    for (size_t i = 0; i < n && !rc; i++)
        if (bt.jobs[i].rc) *err = bt.jobs[i].err, rc = bt.jobs[i].rc;
    for (size_t i = 0; i < n; i++) {
        free(bt.jobs[i].seg);
        free(bt.jobs[i].seg_rc);
        free(bt.jobs[i].seg_cut);
        free(bt.jobs[i].seg_err);
    }
    free(th);
    free(bt.tasks);
    free(bt.jobs);
    pthread_mutex_destroy(&bt.mu);
    pthread_cond_destroy(&bt.cv);
    return rc;
}

int tl_ooxml_add_empty(tl_ooxml *o, const char *sheet_name, tl_err *err)
{
    int rc = begin_sheet(o, sheet_name, 0, 0, err);
    if (rc) return rc;
    PUT_LIT(&o->out.b, "<dimension ref=\"A1\"/><sheetViews><sheetView ");
    if (o->sheets.n == 1) PUT_LIT(&o->out.b, "tabSelected=\"1\" ");
    PUT_LIT(&o->out.b, "workbookViewId=\"0\"/></sheetViews><sheetFormatPr defaultRowHeight=\"15\"/><sheetData/>");
    return end_sheet(o, err);
}

int tl_ooxml_add_points_sheet(tl_ooxml *o, const char *sheet_name, const tl_xy_series *s, size_t n, tl_err *err)
{
    int rc = begin_sheet(o, sheet_name, 0, 1, err);
    if (rc) return rc;
    tl_buf *b = &o->out.b;
    size_t last = 0; /* the last row: the last series' last point */
    for (size_t k = 0; k < n; k++) last += s[k].n + 2;
    tl_buf_printf(b, "<dimension ref=\"A1:B%zu\"/>", last > 2 ? last - 1 : 1);
    PUT_LIT(b, "<sheetViews><sheetView workbookViewId=\"0\"/></sheetViews>"
               "<sheetFormatPr defaultRowHeight=\"15\"/><sheetData>");
    size_t row = 1;
    for (size_t k = 0; k < n; k++) {
        char rn[24];
        size_t nl = fmt_u64(rn, row);
        tl_buf_printf(b, "<row r=\"%zu\">", row);
        if (s[k].name && s[k].name[0]) put_string_cell(b, "A", 1, rn, nl, s[k].name, 0);
        put_string_cell(b, "B", 1, rn, nl, "y", 0);
        PUT_LIT(b, "</row>");
        for (size_t i = 0; i < s[k].n; i++) {
            double v[2] = {s[k].x[i], s[k].y[i]};
            if (!isfinite(v[0]) && !isfinite(v[1])) continue;
            tl_buf_printf(b, "<row r=\"%zu\">", row + 1 + i);
            for (int c = 0; c < 2; c++) {
                if (!isfinite(v[c])) continue;
                char num[32];
                tl_buf_printf(b, "<c r=\"%c%zu\"><v>", "AB"[c], row + 1 + i);
                tl_buf_append(b, num, tl_ooxml_fmt_double(num, v[c]));
                PUT_LIT(b, "</v></c>");
            }
            PUT_LIT(b, "</row>");
        }
        row += s[k].n + 2;
    }
    PUT_LIT(b, "</sheetData>");
    return end_sheet(o, err);
}

/* ---- charts */

#define EMU_PER_PX 9525u
#define DEFAULT_COL_PX 64u
#define ROW_PX 20u

int tl_ooxml_add_chart(tl_ooxml *o, size_t sheet, size_t row, size_t col, uint32_t width_px, uint32_t height_px,
                       const tl_buf *xml, tl_err *err)
{
    const ox_sheet *s = &o->sheets.v[sheet - 1];
    if (!s->drawing) return tl_errf(err, TL_EUSAGE, "xlsx: sheet '%s' cannot show charts", s->name);
    char part[64];
    snprintf(part, sizeof part, "xl/charts/chart%zu.xml", o->anchors.n + 1);
    int rc = tl_zipw_begin(o->z, part, 0, err);
    if (!rc) rc = tl_zipw_write(o->z, xml->p, xml->n, err);
    if (!rc) rc = tl_zipw_end(o->z, err);
    if (rc) return rc;
    /* the bottom-right corner: whole columns and rows the size covers,
     * then the rest as an offset into the next */
    ox_anchor a = {sheet, o->anchors.n + 1, (uint32_t)col, (uint32_t)row, (uint32_t)col, (uint32_t)row, 0, 0};
    uint32_t left = width_px;
    for (;;) {
        uint32_t w = a.c1 < s->ncols ? s->col_px[a.c1] : DEFAULT_COL_PX;
        if (left < w) break;
        left -= w;
        a.c1++;
    }
    a.c1_off = (uint64_t)left * EMU_PER_PX;
    a.r1 += height_px / ROW_PX;
    a.r1_off = (uint64_t)(height_px % ROW_PX) * EMU_PER_PX;
    tl_vec_push(&o->anchors, a);
    return TL_OK;
}

#define NS_SS_DRAWING "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing"
#define NS_A "http://schemas.openxmlformats.org/drawingml/2006/main"
#define NS_C "http://schemas.openxmlformats.org/drawingml/2006/chart"

/* xl/drawings/drawingN.xml of sheet N: one graphic frame per chart, each
 * pointing through the drawing's rels (rId1, rId2, ... in chart order) at
 * its chart part; a sheet without charts gets an empty drawing. */
static void drawing_xml(const tl_ooxml *o, size_t sheet, tl_buf *x)
{
    tl_buf_puts(x, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
                   "<xdr:wsDr xmlns:xdr=\"" NS_SS_DRAWING "\" xmlns:a=\"" NS_A "\">");
    size_t k = 0;
    for (size_t i = 0; i < o->anchors.n; i++) {
        const ox_anchor *a = &o->anchors.v[i];
        if (a->sheet != sheet) continue;
        k++;
        tl_buf_printf(x, "<xdr:twoCellAnchor><xdr:from><xdr:col>%u</xdr:col><xdr:colOff>0</xdr:colOff>"
                         "<xdr:row>%u</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from>"
                         "<xdr:to><xdr:col>%u</xdr:col><xdr:colOff>%llu</xdr:colOff>"
                         "<xdr:row>%u</xdr:row><xdr:rowOff>%llu</xdr:rowOff></xdr:to>",
                      a->c0, a->r0, a->c1, (unsigned long long)a->c1_off, a->r1, (unsigned long long)a->r1_off);
        tl_buf_printf(x, "<xdr:graphicFrame macro=\"\"><xdr:nvGraphicFramePr><xdr:cNvPr id=\"%zu\" name=\"Chart %zu\"/>"
                         "<xdr:cNvGraphicFramePr/></xdr:nvGraphicFramePr>"
                         "<xdr:xfrm><a:off x=\"0\" y=\"0\"/><a:ext cx=\"0\" cy=\"0\"/></xdr:xfrm>"
                         "<a:graphic><a:graphicData uri=\"" NS_C "\"><c:chart xmlns:c=\"" NS_C "\" "
                         "xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\" r:id=\"rId%zu\"/>"
                         "</a:graphicData></a:graphic></xdr:graphicFrame><xdr:clientData/></xdr:twoCellAnchor>",
                      k + 1, k, k);
    }
    tl_buf_puts(x, "</xdr:wsDr>");
}

/* ---- the package parts */

static int put_part(tl_ooxml *o, const char *name, tl_buf *x, tl_err *err)
{
    int rc = tl_zipw_begin(o->z, name, 0, err);
    if (!rc) rc = tl_zipw_write(o->z, x->p, x->n, err);
    if (!rc) rc = tl_zipw_end(o->z, err);
    x->n = 0;
    return rc;
}

#define XML_DECL "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
#define NS_MAIN "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
#define NS_REL "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
#define NS_PKG_REL "http://schemas.openxmlformats.org/package/2006/relationships"

static const char STYLES[] =
    XML_DECL "<styleSheet xmlns=\"" NS_MAIN "\">"
    "<numFmts count=\"2\"><numFmt numFmtId=\"164\" formatCode=\"#,##0.000\"/>"
    "<numFmt numFmtId=\"165\" formatCode=\"0.00\"/></numFmts>"
    "<fonts count=\"2\"><font><sz val=\"11\"/><color rgb=\"FF000000\"/><name val=\"Calibri\"/><family val=\"2\"/></font>"
    "<font><b/><sz val=\"11\"/><color rgb=\"FF000000\"/><name val=\"Calibri\"/><family val=\"2\"/></font></fonts>"
    "<fills count=\"2\"><fill><patternFill patternType=\"none\"/></fill><fill><patternFill patternType=\"gray125\"/></fill></fills>"
    "<borders count=\"1\"><border><left/><right/><top/><bottom/><diagonal/></border></borders>"
    "<cellStyleXfs count=\"1\"><xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\"/></cellStyleXfs>"
    "<cellXfs count=\"4\"><xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\"/>"
    "<xf numFmtId=\"0\" fontId=\"1\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyFont=\"1\"/>"
    "<xf numFmtId=\"164\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyNumberFormat=\"1\"/>"
    "<xf numFmtId=\"165\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyNumberFormat=\"1\"/></cellXfs>"
    "<cellStyles count=\"1\"><cellStyle name=\"Normal\" xfId=\"0\" builtinId=\"0\"/></cellStyles>"
    "<dxfs count=\"0\"/><tableStyles count=\"0\"/></styleSheet>";

static void content_types(const tl_ooxml *o, tl_buf *x)
{
    tl_buf_puts(x, XML_DECL "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">"
                            "<Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>"
                            "<Default Extension=\"xml\" ContentType=\"application/xml\"/>"
                            "<Override PartName=\"/xl/workbook.xml\" "
                            "ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml\"/>"
                            "<Override PartName=\"/xl/styles.xml\" "
                            "ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml\"/>");
    for (size_t i = 0; i < o->sheets.n; i++) {
        tl_buf_printf(x, "<Override PartName=\"/xl/worksheets/sheet%zu.xml\" "
                         "ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml\"/>",
                      i + 1);
        if (o->sheets.v[i].drawing)
            tl_buf_printf(x, "<Override PartName=\"/xl/drawings/drawing%zu.xml\" "
                             "ContentType=\"application/vnd.openxmlformats-officedocument.drawing+xml\"/>",
                          i + 1);
    }
    for (size_t i = 0; i < o->anchors.n; i++)
        tl_buf_printf(x, "<Override PartName=\"/xl/charts/chart%zu.xml\" "
                         "ContentType=\"application/vnd.openxmlformats-officedocument.drawingml.chart+xml\"/>",
                      i + 1);
    tl_buf_puts(x, "</Types>");
}

/* Each drawing sheet's rels (its drawing), the drawing and the drawing's
 * rels (its charts, when it has any). */
static int drawing_parts(tl_ooxml *o, tl_buf *x, tl_err *err)
{
    int rc = TL_OK;
    char part[96];
    for (size_t i = 0; i < o->sheets.n && !rc; i++) {
        if (!o->sheets.v[i].drawing) continue;
        tl_buf_printf(x, XML_DECL "<Relationships xmlns=\"" NS_PKG_REL "\"><Relationship Id=\"rId1\" "
                                  "Type=\"" NS_REL "/drawing\" Target=\"../drawings/drawing%zu.xml\"/></Relationships>",
                      i + 1);
        snprintf(part, sizeof part, "xl/worksheets/_rels/sheet%zu.xml.rels", i + 1);
        rc = put_part(o, part, x, err);
        drawing_xml(o, i + 1, x);
        snprintf(part, sizeof part, "xl/drawings/drawing%zu.xml", i + 1);
        if (!rc) rc = put_part(o, part, x, err);
        size_t k = 0;
        tl_buf_puts(x, XML_DECL "<Relationships xmlns=\"" NS_PKG_REL "\">");
        for (size_t j = 0; j < o->anchors.n; j++)
            if (o->anchors.v[j].sheet == i + 1)
                tl_buf_printf(x, "<Relationship Id=\"rId%zu\" Type=\"" NS_REL "/chart\" Target=\"../charts/chart%zu.xml\"/>",
                              ++k, o->anchors.v[j].chart);
        tl_buf_puts(x, "</Relationships>");
        snprintf(part, sizeof part, "xl/drawings/_rels/drawing%zu.xml.rels", i + 1);
        if (k && !rc) rc = put_part(o, part, x, err);
        x->n = 0;
    }
    return rc;
}

int tl_ooxml_close(tl_ooxml *o, tl_err *err)
{
    tl_buf x = {0};
    size_t n = o->sheets.n;
    content_types(o, &x);
    int rc = put_part(o, "[Content_Types].xml", &x, err);

    tl_buf_puts(&x, XML_DECL "<Relationships xmlns=\"" NS_PKG_REL "\"><Relationship Id=\"rId1\" "
                             "Type=\"" NS_REL "/officeDocument\" Target=\"xl/workbook.xml\"/></Relationships>");
    if (!rc) rc = put_part(o, "_rels/.rels", &x, err);

    tl_buf_puts(&x, XML_DECL "<workbook xmlns=\"" NS_MAIN "\" xmlns:r=\"" NS_REL "\"><workbookPr/>"
                             "<bookViews><workbookView activeTab=\"0\"/></bookViews><sheets>");
    for (size_t i = 0; i < n; i++) {
        tl_buf_puts(&x, "<sheet name=\"");
        put_esc(&x, o->sheets.v[i].name);
        tl_buf_printf(&x, "\" sheetId=\"%zu\"%s r:id=\"rId%zu\"/>", i + 1,
                      o->sheets.v[i].hidden ? " state=\"hidden\"" : "", i + 1);
    }
    tl_buf_puts(&x, "</sheets></workbook>");
    if (!rc) rc = put_part(o, "xl/workbook.xml", &x, err);

    tl_buf_puts(&x, XML_DECL "<Relationships xmlns=\"" NS_PKG_REL "\">");
    for (size_t i = 0; i < n; i++)
        tl_buf_printf(&x, "<Relationship Id=\"rId%zu\" Type=\"" NS_REL "/worksheet\" Target=\"worksheets/sheet%zu.xml\"/>",
                      i + 1, i + 1);
    tl_buf_printf(&x, "<Relationship Id=\"rId%zu\" Type=\"" NS_REL "/styles\" Target=\"styles.xml\"/></Relationships>", n + 1);
    if (!rc) rc = put_part(o, "xl/_rels/workbook.xml.rels", &x, err);

    tl_buf_puts(&x, STYLES);
    if (!rc) rc = put_part(o, "xl/styles.xml", &x, err);
    if (!rc) rc = drawing_parts(o, &x, err);
    tl_buf_free(&x);

    if (rc) tl_zipw_abort(o->z);
    else rc = tl_zipw_close(o->z, err);
    o->z = NULL;
    tl_ooxml_discard(o);
    return rc;
}

void tl_ooxml_discard(tl_ooxml *o)
{
    if (!o) return;
    tl_zipw_abort(o->z);
    for (size_t i = 0; i < o->sheets.n; i++) {
        free(o->sheets.v[i].name);
        free(o->sheets.v[i].col_px);
    }
    tl_vec_free(&o->sheets);
    tl_vec_free(&o->anchors);
    tl_buf_free(&o->out.b);
    free(o);
}
