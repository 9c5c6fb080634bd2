/* html_svg.c — the inline SVG charts of the HTML report (html.c): bars,
 * the GPU time split, a log-log roofline, a histogram. Each appends one
 * <svg> element to a buffer; sizes are in CSS pixels and the SVG scales
 * with the page. No script: hovering a mark shows its <title>. */
#include "report/html_svg.h"

#include <math.h>
#include <string.h>

static const char *const PALETTE[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
#define NPALETTE (sizeof PALETTE / sizeof *PALETTE)

void tl_html_esc(tl_buf *b, const char *s, size_t max_chars)
{
    size_t shown = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p & 0xC0) != 0x80 && max_chars && shown++ == max_chars) {
            tl_buf_puts(b, "…");
            return;
        }
        switch (*p) {
        case '<': tl_buf_puts(b, "&lt;"); break;
        case '>': tl_buf_puts(b, "&gt;"); break;
        case '&': tl_buf_puts(b, "&amp;"); break;
        case '"': tl_buf_puts(b, "&quot;"); break;
        default: tl_buf_putc(b, (char)*p);
        }
    }
}

/* A number as people read it: 3 significant decimals at most. */
void tl_html_num(tl_buf *b, double v)
{
    if (isnan(v)) return;
    double a = fabs(v);
    if (a != 0 && (a >= 1e9 || a < 1e-3)) tl_buf_printf(b, "%.3g", v);
    else if (v == floor(v) && a < 1e15) tl_buf_printf(b, "%.0f", v);
    else tl_buf_printf(b, "%.3f", v);
}

void tl_html_svg_hbars(tl_buf *b, const char *title, const char *const *labels, const double *values,
                       size_t n, const char *unit)
{
    const int label_w = 330, bar_w = 480, row = 20, top = 28;
    double max = 0;
    for (size_t i = 0; i < n; i++)
        if (values[i] > max) max = values[i];
    int h = top + (int)n * row + 8;
    tl_buf_printf(b, "<svg class=\"chart bars\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">",
                  label_w + bar_w + 110, h, label_w + bar_w + 110, h);
    tl_buf_puts(b, "<text class=\"title\" x=\"0\" y=\"16\">");
    tl_html_esc(b, title, 0);
    tl_buf_puts(b, "</text>");
    for (size_t i = 0; i < n; i++) {
        double w = max > 0 ? values[i] / max * bar_w : 0;
        int y = top + (int)i * row;
        tl_buf_printf(b, "<g class=\"bar\"><title>");
        tl_html_esc(b, labels[i], 0);
        tl_buf_puts(b, ": ");
        tl_html_num(b, values[i]);
        tl_buf_printf(b, " %s</title><text class=\"label\" x=\"%d\" y=\"%d\" text-anchor=\"end\">", unit,
                      label_w - 6, y + 14);
        tl_html_esc(b, labels[i], 40);
        tl_buf_printf(b, "</text><rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>", label_w,
                      y + 3, w, row - 6, PALETTE[0]);
        tl_buf_printf(b, "<text class=\"value\" x=\"%.1f\" y=\"%d\">", label_w + w + 4, y + 14);
        tl_html_num(b, values[i]);
        tl_buf_printf(b, " %s</text></g>", unit);
    }
    tl_buf_puts(b, "</svg>\n");
}

void tl_html_svg_split(tl_buf *b, const char *title, const char *const *labels, const double *values,
                       size_t n, const char *unit)
{
    const int w = 900, bar_h = 34, top = 28;
    double total = 0;
    for (size_t i = 0; i < n; i++) total += values[i] > 0 ? values[i] : 0;
    int h = top + bar_h + 16 + (int)n * 20;
    tl_buf_printf(b, "<svg class=\"chart split\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">",
                  w, h, w, h);
    tl_buf_puts(b, "<text class=\"title\" x=\"0\" y=\"16\">");
    tl_html_esc(b, title, 0);
    tl_buf_puts(b, "</text>");
    double x = 0;
    for (size_t i = 0; i < n; i++) {
        double v = values[i] > 0 ? values[i] : 0, part = total > 0 ? v / total * w : 0;
        tl_buf_printf(b, "<rect class=\"part\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>",
                      x, top, part, bar_h, PALETTE[i % NPALETTE]);
        tl_html_esc(b, labels[i], 0);
        tl_buf_puts(b, "</title></rect>");
        x += part;
        int ly = top + bar_h + 18 + (int)i * 20;
        tl_buf_printf(b, "<rect x=\"0\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>", ly - 11,
                      PALETTE[i % NPALETTE]);
        tl_buf_printf(b, "<text class=\"label\" x=\"18\" y=\"%d\">", ly);
        tl_html_esc(b, labels[i], 0);
        tl_buf_puts(b, ": ");
        tl_html_num(b, values[i]);
        tl_buf_printf(b, " %s (%.1f %%)</text>", unit, total > 0 ? v / total * 100 : 0);
    }
    tl_buf_puts(b, "</svg>\n");
}

/* x or y of a value on a log axis spanning [lo, hi] decades over len px. */
static double logpos(double v, double lo, double hi, double len)
{
    return (log10(v) - lo) / (hi - lo) * len;
}

static void decade_range(const double *v, size_t n, double extra, double *lo, double *hi)
{
    double mn = INFINITY, mx = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (v[i] > 0 && isfinite(v[i])) {
            if (v[i] < mn) mn = v[i];
            if (v[i] > mx) mx = v[i];
        }
    if (extra > 0) {
        if (extra < mn) mn = extra;
        if (extra > mx) mx = extra;
    }
    if (!isfinite(mn)) mn = 1, mx = 10;
    *lo = floor(log10(mn));
    *hi = ceil(log10(mx));
    if (*hi <= *lo) *hi = *lo + 1;
}

void tl_html_svg_roofline(tl_buf *b, const tl_html_roofline *r)
{
    const int w = 900, h = 520, ml = 70, mb = 50, mt = 30, mr = 20;
    const double pw = w - ml - mr, ph = h - mb - mt;
    double xlo, xhi, ylo, yhi;
    double ridge = r->mem_bw_tbs > 0 && r->peak_tflops > 0 ? r->peak_tflops / r->mem_bw_tbs : 0;
    decade_range(r->x, r->n, ridge, &xlo, &xhi);
    decade_range(r->y, r->n, r->peak_tflops, &ylo, &yhi);
    tl_buf_printf(b, "<svg class=\"chart roofline\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">",
                  w, h, w, h);
    tl_buf_puts(b, "<text class=\"title\" x=\"0\" y=\"16\">");
    tl_html_esc(b, r->title, 0);
    tl_buf_puts(b, "</text>");
    for (double d = xlo; d <= xhi; d++) {
        double x = ml + logpos(pow(10, d), xlo, xhi, pw);
        tl_buf_printf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x, mt, x, h - mb);
        tl_buf_printf(b, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">1e%d</text>", x,
                      h - mb + 16, (int)d);
    }
    for (double d = ylo; d <= yhi; d++) {
        double y = h - mb - logpos(pow(10, d), ylo, yhi, ph);
        tl_buf_printf(b, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", ml, y, w - mr, y);
        tl_buf_printf(b, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">1e%d</text>", ml - 6,
                      y + 4, (int)d);
    }
    tl_buf_printf(b, "<text class=\"axis\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">arithmetic intensity "
                     "(FLOPS/Byte)</text>", ml + pw / 2, h - 12);
    tl_buf_printf(b, "<text class=\"axis\" transform=\"rotate(-90)\" x=\"%.1f\" y=\"16\" "
                     "text-anchor=\"middle\">TFLOPS/s</text>", -(mt + ph / 2));
    if (ridge > 0) {
        /* the roof: min(peak, intensity x bandwidth), drawn through the ridge */
        double x0 = pow(10, xlo), x1 = pow(10, xhi);
        double y0 = x0 * r->mem_bw_tbs;
        tl_buf_printf(b, "<polyline class=\"roof\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"><title>roof: %.0f TB/s, "
                         "%.0f TFLOPS/s</title></polyline>",
                      ml + logpos(x0, xlo, xhi, pw), h - mb - logpos(y0 > 0 ? y0 : pow(10, ylo), ylo, yhi, ph),
                      ml + logpos(ridge, xlo, xhi, pw), h - mb - logpos(r->peak_tflops, ylo, yhi, ph),
                      ml + logpos(x1, xlo, xhi, pw), h - mb - logpos(r->peak_tflops, ylo, yhi, ph),
                      r->mem_bw_tbs, r->peak_tflops);
    }
    for (size_t i = 0; i < r->n; i++) {
        if (!(r->x[i] > 0 && r->y[i] > 0)) continue;
        double x = ml + logpos(r->x[i], xlo, xhi, pw), y = h - mb - logpos(r->y[i], ylo, yhi, ph);
        tl_buf_printf(b, "<g class=\"point\"><circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"><title>", x, y,
                      PALETTE[i % NPALETTE]);
        tl_html_esc(b, r->labels[i], 0);
        tl_buf_puts(b, ": ");
        tl_html_num(b, r->x[i]);
        tl_buf_puts(b, " FLOPS/Byte, ");
        tl_html_num(b, r->y[i]);
        tl_buf_puts(b, " TFLOPS/s</title></circle>");
        if (i < r->nlabelled) {
            tl_buf_printf(b, "<text class=\"plabel\" x=\"%.1f\" y=\"%.1f\">", x + 6, y - 5);
            tl_html_esc(b, r->labels[i], 28);
            tl_buf_puts(b, "</text>");
        }
        tl_buf_puts(b, "</g>");
    }
    tl_buf_puts(b, "</svg>\n");
}

void tl_html_svg_histogram(tl_buf *b, const char *title, const double *lo, const double *hi,
                           const double *count, size_t n, const char *unit)
{
    const int w = 900, h = 300, ml = 50, mb = 40, mt = 30;
    double max = 0;
    for (size_t i = 0; i < n; i++)
        if (count[i] > max) max = count[i];
    double bw = n ? (double)(w - ml - 10) / (double)n : 0;
    tl_buf_printf(b, "<svg class=\"chart histogram\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">",
                  w, h, w, h);
    tl_buf_puts(b, "<text class=\"title\" x=\"0\" y=\"16\">");
    tl_html_esc(b, title, 0);
    tl_buf_puts(b, "</text>");
    for (size_t i = 0; i < n; i++) {
        double bh = max > 0 ? count[i] / max * (h - mb - mt) : 0;
        tl_buf_printf(b, "<rect class=\"bin\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
                      ml + bw * (double)i, h - mb - bh, bw > 1 ? bw - 1 : bw, bh, PALETTE[0]);
        tl_html_num(b, lo[i]);
        tl_buf_puts(b, "–");
        tl_html_num(b, hi[i]);
        tl_buf_printf(b, " %s: ", unit);
        tl_html_num(b, count[i]);
        tl_buf_puts(b, "</title></rect>");
    }
    if (n) {
        tl_buf_printf(b, "<text class=\"tick\" x=\"%d\" y=\"%d\">", ml, h - mb + 16);
        tl_html_num(b, lo[0]);
        tl_buf_printf(b, " %s</text><text class=\"tick\" x=\"%d\" y=\"%d\" text-anchor=\"end\">", unit, w - 10,
                      h - mb + 16);
        tl_html_num(b, hi[n - 1]);
        tl_buf_printf(b, " %s</text>", unit);
    }
    tl_buf_printf(b, "<text class=\"tick\" x=\"%d\" y=\"%d\" text-anchor=\"end\">", ml - 4, mt + 10);
    tl_html_num(b, max);
    tl_buf_puts(b, "</text></svg>\n");
}
