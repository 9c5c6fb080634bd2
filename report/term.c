/* term.c — a table aligned for a terminal: what `tracelens` prints when no
 * file output is asked for. Meant for people, not for diffing: numbers get a
 * fixed precision and long text is cut, unlike the CSV text rules. Widths
 * count display columns, not bytes, because the reference column names use
 * "µ" and kernel names may hold any UTF-8. */
#include "report/report.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, one column */

/* Decodes one UTF-8 sequence of s[0..n); returns its length (1 for an
 * invalid byte, which then counts as one column). */
static size_t decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t len = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    if (len == 1 || !len || len > n) {
        *cp = c;
        return 1;
    }
    uint32_t v = c & (0x3f >> (len - 1));
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            *cp = c;
            return 1;
        }
        v = v << 6 | (s[i] & 0x3f);
    }
    *cp = v;
    return len;
}

static int cp_width(uint32_t c)
{
    if (c == 0) return 0;
    if ((c >= 0x300 && c <= 0x36f) || (c >= 0x1ab0 && c <= 0x1aff) || (c >= 0x1dc0 && c <= 0x1dff) ||
        (c >= 0x20d0 && c <= 0x20ff) || (c >= 0xfe20 && c <= 0xfe2f) || (c >= 0x200b && c <= 0x200f) ||
        c == 0xfeff)
        return 0; /* combining marks, zero-width characters */
    if ((c >= 0x1100 && c <= 0x115f) || (c >= 0x2e80 && c <= 0xa4cf && c != 0x303f) ||
        (c >= 0xac00 && c <= 0xd7a3) || (c >= 0xf900 && c <= 0xfaff) || (c >= 0xfe30 && c <= 0xfe4f) ||
        (c >= 0xff00 && c <= 0xff60) || (c >= 0xffe0 && c <= 0xffe6) || (c >= 0x1f300 && c <= 0x1f64f) ||
        (c >= 0x1f900 && c <= 0x1f9ff) || (c >= 0x20000 && c <= 0x3fffd))
        return 2; /* East Asian wide, emoji */
    return 1;
}

size_t tl_report_text_width(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += decode(u + i, n - i, &cp);
        w += (size_t)cp_width(cp);
    }
    return w;
}

/* Appends s to b with control characters as spaces, cut to at most max
 * columns (the last one an ellipsis when cut). Returns the width written. */
static size_t put_cut(tl_buf *b, const char *s, size_t max)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s), total = tl_report_text_width(s, n), w = 0;
    size_t limit = total > max ? (max ? max - 1 : 0) : total;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t l = decode(u + i, n - i, &cp);
        int cw = cp < 0x20 || cp == 0x7f ? 1 : cp_width(cp);
        if (w + (size_t)cw > limit) break;
        if (cp < 0x20 || cp == 0x7f) tl_buf_putc(b, ' ');
        else tl_buf_append(b, s + i, l);
        w += (size_t)cw;
        i += l;
    }
    if (total > max && max) {
        tl_buf_puts(b, ELLIPSIS);
        w++;
    }
    return w;
}

static void fmt_num(const tl_table *t, size_t c, size_t r, int prec, char *out, size_t outsz)
{
    const tl_column *col = &t->cols[c];
    if (tl_table_is_missing(t, c, r)) {
        out[0] = 0;
        return;
    }
    if (col->type == TL_I64) {
        snprintf(out, outsz, "%lld", (long long)col->v.i[r]);
        return;
    }
    double v = col->v.f[r];
    if (prec < 0) {
        char f[40];
        tl_fmt_pyfloat(v, f);
        snprintf(out, outsz, "%s", f);
    } else if (isinf(v)) {
        snprintf(out, outsz, "%s", v > 0 ? "inf" : "-inf");
    } else if (v != 0 && (fabs(v) >= 1e15 || fabs(v) < 0.5 * pow(10, -prec))) {
        snprintf(out, outsz, "%.*e", prec, v);
    } else {
        snprintf(out, outsz, "%.*f", prec, v);
    }
}

int tl_report_term_print(FILE *fp, const tl_table *t, const tl_term_opts *opts)
{
    tl_term_opts o = {0};
    if (opts) o = *opts;
    size_t max_rows = o.max_rows ? o.max_rows : 50;
    size_t max_cell = o.max_cell ? o.max_cell : 40;
    int prec = o.precision == 0 ? 3 : o.precision;
    size_t shown = t->nrows < max_rows ? t->nrows : max_rows;
    if (o.title) fprintf(fp, "%s (%zu rows \xc3\x97 %zu columns)\n", t->name, t->nrows, t->ncols);
    if (!t->ncols) {
        fputs("(no columns)\n", fp);
        return ferror(fp) ? TL_EIO : TL_OK;
    }
    /* Render every shown cell once into one buffer, then align. */
    tl_buf text = {0};
    size_t ncell = (shown + 1) * t->ncols;
    size_t *off = tl_xmalloc(ncell * sizeof *off), *wid = tl_xmalloc(ncell * sizeof *wid);
    size_t *colw = tl_xcalloc(t->ncols, sizeof *colw);
    char num[64];
    for (size_t r = 0; r <= shown; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            size_t k = r * t->ncols + c;
            const char *s;
            if (r == 0) s = t->cols[c].name;
            else if (t->cols[c].type == TL_I64 || t->cols[c].type == TL_F64) {
                fmt_num(t, c, r - 1, prec, num, sizeof num);
                s = num;
            } else {
                s = tl_table_cell_text(t, c, r - 1, num, sizeof num);
            }
            off[k] = text.n;
            wid[k] = put_cut(&text, s, max_cell);
            tl_buf_putc(&text, 0);
            if (wid[k] > colw[c]) colw[c] = wid[k];
        }
    }
    tl_buf line = {0};
    for (size_t r = 0; r <= shown; r++) {
        line.n = 0;
        for (size_t c = 0; c < t->ncols; c++) {
            size_t k = r * t->ncols + c;
            int right = t->cols[c].type == TL_I64 || t->cols[c].type == TL_F64;
            size_t pad = colw[c] - wid[k];
            if (c) tl_buf_puts(&line, "  ");
            if (right)
                for (size_t i = 0; i < pad; i++) tl_buf_putc(&line, ' ');
            tl_buf_puts(&line, text.p + off[k]);
            if (!right)
                for (size_t i = 0; i < pad; i++) tl_buf_putc(&line, ' ');
        }
        while (line.n && line.p[line.n - 1] == ' ') line.n--;
        fprintf(fp, "%.*s\n", (int)line.n, line.p ? line.p : "");
        if (r == 0) {
            line.n = 0;
            for (size_t c = 0; c < t->ncols; c++) {
                if (c) tl_buf_puts(&line, "  ");
                for (size_t i = 0; i < colw[c]; i++) tl_buf_putc(&line, '-');
            }
            fprintf(fp, "%.*s\n", (int)line.n, line.p ? line.p : "");
        }
    }
    if (shown < t->nrows) fprintf(fp, ELLIPSIS " %zu more rows\n", t->nrows - shown);
    tl_buf_free(&line);
    tl_buf_free(&text);
    free(off);
    free(wid);
    free(colw);
    return ferror(fp) ? TL_EIO : TL_OK;
}
